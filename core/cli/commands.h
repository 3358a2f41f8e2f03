// The kforge subcommands; each takes its own arguments (argv[0] is the subcommand name).
#pragma once

namespace kforge::cli {

int cmd_run(int argc, char** argv);
int cmd_list_plugins(int argc, char** argv);
int cmd_prepare_data(int argc, char** argv);
int cmd_check_env(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_tasks(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_extract(int argc, char** argv);
int cmd_config(int argc, char** argv);
int cmd_help(int argc, char** argv);

}  // namespace kforge::cli
