// The option tables of kforge's commands: each command parses its command line with its table, and the CLI
// reference (`kforge help --format markdown`) is written from the same tables.
#pragma once

#include <cxxopts.hpp>
#include <vector>

namespace kforge::cli {

cxxopts::Options run_options();
cxxopts::Options list_plugins_options();
cxxopts::Options prepare_data_options();
cxxopts::Options generate_options();
cxxopts::Options eval_options();
cxxopts::Options convert_options();
cxxopts::Options tasks_options();
cxxopts::Options report_options();
cxxopts::Options extract_options();
cxxopts::Options check_env_options();
cxxopts::Options config_options();
cxxopts::Options help_options();

/// The option-table builders of every command of kforge-host, in the order of `kforge --help`.
const std::vector<cxxopts::Options (*)()>& command_tables();

}  // namespace kforge::cli
