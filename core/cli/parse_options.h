// One parser for every subcommand's options: a usage error is one line naming the command, the
// argument and the fix ("did you mean" for an unknown option), not cxxopts' bare message.
#pragma once

#include <cxxopts.hpp>
#include <optional>
#include <string>

namespace kforge::cli {

/// What parse_options found: the parsed arguments, or (when there is nothing more to do) the
/// command's exit code.
struct ParsedOptions {
  std::optional<cxxopts::ParseResult> args;
  int exit_code = 0;
};

/// Parses argv (argv[0] is the subcommand) with `options`, whose program name is the command
/// ("kforge run"). With -h/--help, prints `help` (empty: the options' own help) to stdout and
/// returns no args with exit code 0. On an unknown option, a stray argument or a bad value
/// ("'x' is not a valid value for --grace-sec."), prints e.g.
/// "kforge run: unknown option '--dryrun'. Did you mean '--dry-run'? (kforge run --help lists the
/// options)" to stderr and returns no args with kExitUsage.
ParsedOptions parse_options(cxxopts::Options& options, int argc, char** argv, const std::string& help = "");

}  // namespace kforge::cli
