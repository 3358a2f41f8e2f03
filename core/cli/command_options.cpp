// The options of the commands that load plugins or take config overrides (see command_options.h).
#include "cli/command_options.h"

#include "config/overrides.h"

namespace kforge::cli {

ParsedOptions parse_options_and_overrides(cxxopts::Options& options, int argc, char** argv) {
  config::SplitArguments split = config::split_overrides(argc, argv);
  ParsedOptions parsed = parse_options(options, static_cast<int>(split.rest.size()), split.rest.data());
  parsed.overrides = std::move(split.overrides);
  return parsed;
}

void add_plugin_dir_option(cxxopts::Options& options) {
  options.add_options()("plugin-dir", "extra plugin directory (repeatable)",
                        cxxopts::value<std::vector<std::string>>());
}

void add_allow_unsafe_plugin_dir_option(cxxopts::Options& options) {
  options.add_options()("allow-unsafe-plugin-dir",
                        "load plugins from directories or files that other users can write to, or that another user "
                        "owns (refused by default: a plugin runs with your rights)");
}

std::vector<std::string> plugin_dirs_given(const cxxopts::ParseResult& args) {
  return args.count("plugin-dir") ? args["plugin-dir"].as<std::vector<std::string>>() : std::vector<std::string>{};
}

bool unsafe_plugins_allowed(const cxxopts::ParseResult& args) { return args.count("allow-unsafe-plugin-dir") > 0; }

}  // namespace kforge::cli
