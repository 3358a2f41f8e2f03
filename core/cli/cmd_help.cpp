// kforge help --format markdown: the CLI reference page (docs/reference/cli.md) from the commands' option tables.
#include <cxxopts.hpp>
#include <iostream>

#include "cli/cli_reference.h"
#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace kforge::cli {

cxxopts::Options help_options() {
  cxxopts::Options options("kforge help",
                           "Print kforge's usage (`kforge help` alone), or with --format markdown the CLI\n"
                           "reference: every command's usage, description and options, written from the option\n"
                           "tables the commands parse with (docs/reference/cli.md is this output).");
  options.custom_help("[--format markdown]");
  options.add_options()("format", "markdown: the CLI reference page", cxxopts::value<std::string>())("h,help",
                                                                                                     "this help");
  return options;
}

int cmd_help(int argc, char** argv) {
  cxxopts::Options options = help_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("format")) return usage_error(options, "missing --format markdown");
  if (args["format"].as<std::string>() != "markdown") {
    return usage_error(options, "--format " + args["format"].as<std::string>() + ": the only format is markdown");
  }
  std::cout << cli_reference_markdown();
  return kExitOk;
}

}  // namespace kforge::cli
