// kforge config reference: the configuration reference, generated from kforge's key declarations and those of every
// loaded plugin (config_reference.h).
#include <cxxopts.hpp>
#include <iostream>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/config_reference.h"
#include "cli/exit_codes.h"
#include "plugins/host.h"

namespace kforge::cli {

cxxopts::Options config_options() {
  cxxopts::Options options("kforge config",
                           "kforge config reference --format markdown: every config section and key (type, default,\n"
                           "allowed values, status, the component that declares it) of kforge and of the plugins\n"
                           "found, as one Markdown page on stdout.");
  options.positional_help("reference");
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("what", "what to print: reference", cxxopts::value<std::string>())(
      "format", "output format: markdown", cxxopts::value<std::string>()->default_value("markdown"))("h,help",
                                                                                                     "this help");
  options.parse_positional({"what"});
  return options;
}

int cmd_config(int argc, char** argv) {
  cxxopts::Options options = config_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("what") || args["what"].as<std::string>() != "reference") {
    return usage_error(options, "expected `kforge config reference`");
  }
  if (args["format"].as<std::string>() != "markdown") {
    return usage_error(options, "--format " + args["format"].as<std::string>() + ": the only format is markdown");
  }
  std::unique_ptr<plugins::PluginHost> host;
  try {
    host = plugins::load_plugins(plugin_dirs_given(args), unsafe_plugins_allowed(args));
  } catch (const std::exception& e) {
    std::cerr << "kforge config: " << e.what() << "\n";
    return kExitUsage;
  }
  std::cout << config_reference_markdown(host->set) << std::flush;
  return kExitOk;
}

}  // namespace kforge::cli
