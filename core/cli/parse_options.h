// The options helper of every subcommand: one parser (a usage error is one line naming the command,
// the argument and the fix, "did you mean" for an unknown option, not cxxopts' bare message), the
// config overrides set aside, the shared --plugin-dir option, and the usage error with the help.
#pragma once

#include <cxxopts.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::cli {

/// What parse_options found: the parsed arguments, or (when there is nothing more to do) the
/// command's exit code.
struct ParsedOptions {
  std::optional<cxxopts::ParseResult> args;
  int exit_code = 0;
  std::vector<std::string> overrides;  ///< with parse_options_and_overrides: the --section.key[=value] overrides
};

/// Parses argv (argv[0] is the subcommand) with `options`, whose program name is the command
/// ("kforge run"). With -h/--help, prints `help` (empty: the options' own help) to stdout and
/// returns no args with exit code 0. On an unknown option, a stray argument or a bad value
/// ("'x' is not a valid value for --grace-sec."), prints e.g.
/// "kforge run: unknown option '--dryrun'. Did you mean '--dry-run'? (kforge run --help lists the
/// options)" to stderr and returns no args with kExitUsage.
ParsedOptions parse_options(cxxopts::Options& options, int argc, char** argv, const std::string& help = "");

/// parse_options for a command that takes config overrides: the --section.key=value and
/// --section.key value arguments (config::split_overrides) are set aside into `overrides` first.
ParsedOptions parse_options_and_overrides(cxxopts::Options& options, int argc, char** argv);

/// Adds --plugin-dir DIR (repeatable): a directory searched for plugins besides the shipped one.
void add_plugin_dir_option(cxxopts::Options& options);
/// Adds --allow-unsafe-plugin-dir: load plugins that another user could have written (see
/// plugins/plugin_permissions.h), which are refused by default.
void add_allow_unsafe_plugin_dir_option(cxxopts::Options& options);
/// The --plugin-dir values, in order (none: empty).
std::vector<std::string> plugin_dirs_given(const cxxopts::ParseResult& args);

/// True when --allow-unsafe-plugin-dir was given.
bool unsafe_plugins_allowed(const cxxopts::ParseResult& args);

/// Prints "<command>: <problem>", a blank line and the command's help to stderr; returns kExitUsage.
int usage_error(const cxxopts::Options& options, const std::string& problem);

}  // namespace kforge::cli
