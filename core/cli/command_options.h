// The options of the commands that load plugins or take config overrides: --plugin-dir,
// --allow-unsafe-plugin-dir and the --section.key=value overrides, on top of cmdline's parser (whose names the CLI
// uses unqualified).
#pragma once

#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "cmdline/parse_options.h"

namespace kforge::cli {

using cmdline::parse_options;
using cmdline::ParsedOptions;
using cmdline::usage_error;

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

}  // namespace kforge::cli
