// Parsing a subcommand's options: one parser for every command, so a usage error is one line naming the command,
// the argument and the fix ("did you mean" for an unknown option), not cxxopts' bare message.
#pragma once

#include <cxxopts.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::cmdline {

/// What parse_options found: the parsed arguments, or (when there is nothing more to do) the
/// command's exit code.
struct ParsedOptions {
  std::optional<cxxopts::ParseResult> args;
  int exit_code = 0;
  std::vector<std::string> overrides;  ///< with cli::parse_options_and_overrides: the --section.key[=value] overrides
};

/// Parses argv (argv[0] is the subcommand) with `options`, whose program name is the command
/// ("kforge run"). With -h/--help, prints `help` (empty: the options' own help) to stdout and
/// returns no args with exit code 0. On an unknown option, a stray argument or a bad value
/// ("'x' is not a valid value for --grace-sec."), prints e.g.
/// "kforge run: unknown option '--dryrun'. Did you mean '--dry-run'? (kforge run --help lists the
/// options)" to stderr and returns no args with kExitUsage.
ParsedOptions parse_options(cxxopts::Options& options, int argc, char** argv, const std::string& help = "");

/// Prints "<command>: <problem>", a blank line and the command's help to stderr; returns kExitUsage.
int usage_error(const cxxopts::Options& options, const std::string& problem);

}  // namespace kforge::cmdline
