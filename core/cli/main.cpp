// kforge-host: the LibTorch side of the command line; dispatches to the subcommands. Users run `kforge`
// (core/frontend/main.cpp), which answers a repeated list-plugins from its cache and execs this for the rest.
// `kforge launch`'s workers are forks of this process that run host_main with their own command line.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/version.h"
#include "launch/launch.h"
#include "plugins/plugin_file.h"
#include "resilience/shutdown.h"

namespace {

constexpr const char* kUsage = R"(kforge: fault-tolerant training of decoder LLMs, built from plugins.

Usage:
  kforge run CONFIG.toml [--plugin-dir DIR]... [--allow-unsafe-plugin-dir] [--dry-run] [--section.key=value]...
  kforge launch --nproc-per-node N [--nnodes N --node-rank R --master-addr A --master-port P] [--] run CONFIG.toml ...
  kforge list-plugins [--plugin-dir DIR]... [--allow-unsafe-plugin-dir] [--json] [-v]
  kforge prepare-data --input TEXT... --output DIR (--train-tokenizer --vocab-size N | --tokenizer MODEL)
  kforge generate --checkpoint DIR [--prompt TEXT]... [--prompts-file FILE] [--max-new-tokens N]
                  [--temperature T] [--top-k K] [--top-p P] [--seed S] [--tokenizer MODEL]
  kforge eval --checkpoint DIR [--plugin-dir DIR]... [--section.key=value]...
  kforge convert (--to hf CHECKPOINT OUT | --from hf DIR OUT) [--plugin-dir DIR]...
  kforge report RUN_DIR [--out FILE] [--log-y]
  kforge extract --checkpoint DIR (--input TEXT | --input-file FILE | --tokens IDS) [--layers all|L,..]
                 [--what residual|POINT,..] OUT.npz
  kforge check-env [--json] [--strict]
  kforge --version
  kforge COMMAND --help

Commands:
  run            train with a TOML config (resumes from checkpoint.dir automatically)
  launch         start and supervise N local worker processes of a distributed job
  list-plugins   list the components of every plugin found, and refused plugin files
  prepare-data   tokenise text or JSON Lines (plain, gzip, zstd) into .npy shards
  generate       continue prompts with a checkpoint (KV-cache sampling)
  eval           eval loss and perplexity of a checkpoint on its eval dataset
  convert        export a checkpoint to Hugging Face safetensors, or import one
  report         write a self-contained report.html with plots of a run directory
  extract        capture activations (and attention) of a checkpoint's forward into a .npz
  check-env      report the BLAS, threads, ISA and GEMM speed this machine gives kforge

Plugins are the libkforge_*.so files in each --plugin-dir and in the directory that ships with
kforge; a plugin directory or file that other users can write to, or that another user owns, is
refused unless --allow-unsafe-plugin-dir is given. Config keys are KempnerForge's; any key can be overridden as --section.key=value (or
--section.key value). launch also takes torchrun's spellings (--nproc_per_node, --master_port, ...).
)";

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
  if (command == "convert") return cmd_convert(argc, argv);
  if (command == "report") return cmd_report(argc, argv);
  if (command == "extract") return cmd_extract(argc, argv);
  std::fprintf(stderr, "kforge: unknown command '%s'.\n\n%s", command.c_str(), kUsage);
  return kExitUsage;
}

// The whole command line's exit code: main's, and each of launch's forked workers'.
int host_main(int argc, char** argv) {
  using namespace kforge::cli;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (command == "--version" || command == "version") {
    print_version();
    return kExitOk;
  }
  // A command reports its own errors; one that escapes is still a message and an exit code, not an abort.
  try {
    return dispatch(command, argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kforge: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "kforge: error: an unknown exception escaped 'kforge %s'\n", command.c_str());
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) { return host_main(argc, argv); }
