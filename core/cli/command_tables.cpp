// The list of kforge's commands and their option tables (see command_tables.h).
#include "cli/command_tables.h"

#include "launch/launch.h"

namespace kforge::cli {

const std::vector<cxxopts::Options (*)()>& command_tables() {
  static const std::vector<cxxopts::Options (*)()> tables = {
      run_options,      launch::launch_options, list_plugins_options, prepare_data_options,
      generate_options, eval_options,           tasks_options,        convert_options,
      report_options,   extract_options,        check_env_options,    config_options,
      help_options};
  return tables;
}

}  // namespace kforge::cli
