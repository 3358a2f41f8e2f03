// One parser for every subcommand's options: a usage error is one line naming the command, the
// argument and the fix ("did you mean" for an unknown option), not cxxopts' bare message.
#pragma once

#include <cxxopts.hpp>
#include <optional>

namespace kforge::cli {

/// Parses argv (argv[0] is the subcommand) with `options`, whose program name is the command
/// ("kforge run"). On an unknown option, a stray argument or a bad value ("'x' is not a valid value
/// for --grace-sec."), prints e.g.
/// "kforge run: unknown option '--dryrun'. Did you mean '--dry-run'? (kforge run --help lists the
/// options)" to stderr and returns nullopt: the caller exits with kExitUsage.
std::optional<cxxopts::ParseResult> parse_options(cxxopts::Options& options, int argc, char** argv);

}  // namespace kforge::cli
