// kforge-host: the LibTorch side of the command line; dispatches to the subcommands. Users run `kforge`
// (core/frontend/main.cpp), which answers a repeated list-plugins from its cache and execs this for the rest.
// `kforge launch`'s workers are forks of this process that run host_main with their own command line.
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/error_message.h"
#include "cli/exit_codes.h"
#include "cmdline/usage.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/version.h"
#include "launch/launch.h"
#include "plugins/plugin_file.h"
#include "resilience/shutdown.h"

namespace {

void print_version() {
  const kforge_build_info b = kforge::plugins::host_build_info();
  std::printf("kforge %s\nplugin ABI %u, kforge-sdk %s\nLibTorch %s (cxx11-abi=%d, %s)\ncompiler %s\n",
              KFORGE_SDK_VERSION, b.abi_version, b.sdk_version, b.torch_version, b.cxx11_abi,
              b.cuda ? "CUDA" : "CPU", b.compiler);
}

int host_main(int argc, char** argv);

// The subcommand's exit code.
int dispatch(const std::string& command, int argc, char** argv) {
  using namespace kforge::cli;
  // Installs its signal handlers before it unblocks them, and forks its workers before any thread starts.
  if (command == "launch") return kforge::launch::run_launch(argc, argv, host_main);
  if (command == "run") return cmd_run(argc, argv);   // installs its shutdown handlers before it unblocks them
  kforge::resilience::block_shutdown_signals(false);  // blocked by kforge launch or the front-end across exec
  if (command == "list-plugins") return cmd_list_plugins(argc, argv);
  if (command == "prepare-data") return cmd_prepare_data(argc, argv);
  if (command == "check-env") return cmd_check_env(argc, argv);
  if (command == "generate") return cmd_generate(argc, argv);
  if (command == "eval") return cmd_eval(argc, argv);
  if (command == "tasks") return cmd_tasks(argc, argv);
  if (command == "convert") return cmd_convert(argc, argv);
  if (command == "report") return cmd_report(argc, argv);
  if (command == "extract") return cmd_extract(argc, argv);
  if (command == "config") return cmd_config(argc, argv);
  if (command == "help") return cmd_help(argc, argv);
  throw std::logic_error("'" + command + "' is a command in cmdline/usage.cpp that kforge-host does not dispatch");
}

// The whole command line's exit code: main's, and each of launch's forked workers'.
int host_main(int argc, char** argv) {
  using namespace kforge::cli;
  // No command, help or an unknown one (kforge's front-end answers these itself; kforge-host run directly, here).
  if (const std::optional<int> code = kforge::cmdline::answer_from_usage(argc, argv)) return *code;
  const std::string command = argv[1];
  if (command == "--version" || command == "version") {
    print_version();
    return kExitOk;
  }
  // A command reports its own errors; one that escapes is still a message and an exit code, not an abort.
  try {
    return dispatch(command, argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kforge: error: %s\n", kforge::cli::error_message(e).c_str());
  } catch (...) {
    std::fprintf(stderr, "kforge: error: an unknown exception escaped 'kforge %s'\n", command.c_str());
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) { return host_main(argc, argv); }
