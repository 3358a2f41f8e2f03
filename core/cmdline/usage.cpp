// kforge's top-level usage and the command lines it answers alone (see usage.h).
#include "cmdline/usage.h"

#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "cmdline/did_you_mean.h"
#include "cmdline/process_exit_codes.h"

namespace kforge::cmdline {
namespace {

constexpr std::string_view kHostCommands[] = {"run",      "launch",    "list-plugins", "prepare-data",
                                              "generate", "eval",      "tasks",        "convert",
                                              "report",   "extract",   "check-env",    "config",
                                              "help",     "--version", "version"};

}  // namespace

const char* usage() {
  return R"(kforge: fault-tolerant training of decoder LLMs, built from plugins.

Usage:
  kforge run CONFIG.toml [--plugin-dir DIR]... [--allow-unsafe-plugin-dir] [--dry-run] [--section.key=value]...
  kforge launch --nproc-per-node N [--nnodes N --node-rank R --master-addr A --master-port P] [--] run CONFIG.toml ...
  kforge list-plugins [--plugin-dir DIR]... [--allow-unsafe-plugin-dir] [--json] [-v]
  kforge prepare-data --input TEXT... --output DIR (--train-tokenizer --vocab-size N | --tokenizer MODEL)
  kforge generate --checkpoint DIR [--prompt TEXT]... [--prompts-file FILE] [--max-new-tokens N]
                  [--temperature T] [--top-k K] [--top-p P] [--seed S] [--tokenizer MODEL]
  kforge eval --checkpoint DIR [--plugin-dir DIR]... [--section.key=value]...
  kforge tasks convert --from BENCHMARK RAW_PATH... --out TASK_DIR
  kforge convert (--to hf CHECKPOINT OUT | --from hf DIR OUT) [--plugin-dir DIR]...
  kforge report RUN_DIR [--out FILE] [--log-y]
  kforge extract --checkpoint DIR (--input TEXT | --input-file FILE | --tokens IDS) [--layers all|L,..]
                 [--what residual|POINT,..] OUT.npz
  kforge check-env [--json] [--strict]
  kforge config reference [--plugin-dir DIR]... [--allow-unsafe-plugin-dir] [--format markdown]
  kforge help [--format markdown]
  kforge --version
  kforge COMMAND --help

Commands:
  run            train with a TOML config (resumes from checkpoint.dir automatically)
  launch         start and supervise N local worker processes of a distributed job
  list-plugins   list the components of every plugin found, and refused plugin files
  prepare-data   tokenise text or JSON Lines (plain, gzip, zstd) into .npy shards
  generate       continue prompts with a checkpoint (KV-cache sampling)
  eval           eval loss and perplexity of a checkpoint on its eval dataset
  tasks          convert a benchmark's raw files (HellaSwag, ARC, MMLU, ...) into eval task directories
  convert        export a checkpoint to Hugging Face safetensors, or import one
  report         write a self-contained report.html with plots of a run directory
  extract        capture activations (and attention) of a checkpoint's forward into a .npz
  check-env      report the BLAS, threads, ISA and GEMM speed this machine gives kforge
  config         print the configuration reference: every section and key of kforge and the plugins found
  help           this usage; with --format markdown, every command's options as a Markdown page

Plugins are the libkforge_*.so files in each --plugin-dir and in the directory that ships with
kforge; a plugin directory or file that other users can write to, or that another user owns, is
refused unless --allow-unsafe-plugin-dir is given. Config keys are KempnerForge's; any key can be overridden as --section.key=value (or
--section.key value). launch also takes torchrun's spellings (--nproc_per_node, --master_port, ...).
)";
}

bool is_host_command(std::string_view word) {
  for (std::string_view command : kHostCommands) {
    if (word == command) return true;
  }
  return false;
}

std::optional<int> answer_from_usage(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage(), stderr);
    return kExitUsage;
  }
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || (command == "help" && argc == 2)) {
    std::fputs(usage(), stdout);
    return kExitOk;
  }
  if (is_host_command(command)) return std::nullopt;
  const std::vector<std::string> commands(std::begin(kHostCommands), std::end(kHostCommands));
  std::fprintf(stderr, "kforge: unknown command '%s'.%s\n\n%s", argv[1], did_you_mean(command, commands).c_str(),
               usage());
  return kExitUsage;
}

}  // namespace kforge::cmdline
