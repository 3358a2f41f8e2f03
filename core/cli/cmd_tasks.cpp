// kforge tasks convert: a benchmark's public raw files to task directories for `kforge eval --tasks`.
#include <fmt/format.h>

#include <cxxopts.hpp>
#include <iostream>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "eval_tasks/benchmark_converters.h"
#include "eval_tasks/task_writer.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {
namespace {

constexpr const char* kTasksCommand = "kforge tasks";

std::string benchmark_list() {
  std::string text;
  for (const eval_tasks::BenchmarkConverter& c : eval_tasks::benchmark_converters()) {
    text += fmt::format("  {:<15} {}\n", c.name, c.raw_files);
  }
  return text;
}

}  // namespace

cxxopts::Options tasks_options() {
  cxxopts::Options options(
      kTasksCommand,
      "kforge tasks convert --from BENCHMARK RAW_PATH... --out TASK_DIR: converts a benchmark's public raw files\n"
      "(downloaded by you; kforge fetches nothing) into task directories TASK_DIR/<task>/ (task.toml and JSON Lines\n"
      "documents) for `kforge eval --tasks ... --task-dir TASK_DIR`. Prompts, choices and few-shot splits are those\n"
      "lm-eval-harness v0.4.x builds. A task converted again is overwritten. The benchmarks and their RAW_PATHs:\n" +
          benchmark_list() +
          "Exit codes: 0 done, 1 failed while writing, 2 bad arguments or raw files.");
  options.custom_help("convert --from BENCHMARK RAW_PATH... --out TASK_DIR");
  options.positional_help("");
  options.add_options("positional")("what", "", cxxopts::value<std::string>())(
      "paths", "", cxxopts::value<std::vector<std::string>>());
  options.add_options()("from", "the benchmark the raw files are from (see above)", cxxopts::value<std::string>())(
      "out", "the task directory to write the tasks into", cxxopts::value<std::string>())("h,help", "this help");
  options.parse_positional({"what", "paths"});
  return options;
}

int cmd_tasks(int argc, char** argv) {
  cxxopts::Options options = tasks_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("what") || args["what"].as<std::string>() != "convert") {
    return usage_error(options, "expected `kforge tasks convert`");
  }
  if (!args.count("from")) return usage_error(options, "missing --from BENCHMARK");
  if (!args.count("out")) return usage_error(options, "missing --out TASK_DIR");
  const auto paths = args.count("paths") ? args["paths"].as<std::vector<std::string>>() : std::vector<std::string>{};
  std::vector<eval_tasks::ConvertedTask> tasks;
  try {
    tasks = eval_tasks::convert_benchmark(args["from"].as<std::string>(),
                                          std::vector<std::filesystem::path>(paths.begin(), paths.end()));
  } catch (const sdk::ConfigError& e) {
    std::cerr << kTasksCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  const std::string out = args["out"].as<std::string>();
  try {
    for (const eval_tasks::ConvertedTask& task : tasks) {
      const auto dir = eval_tasks::write_task(out, task);
      std::cout << fmt::format("{}: {} documents{} -> {}\n", task.name, task.eval_docs.size(),
                               task.fewshot_docs.empty() ? "" : fmt::format(", {} few-shot", task.fewshot_docs.size()),
                               dir.string());
    }
  } catch (const std::exception& e) {
    std::cerr << kTasksCommand << ": " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace kforge::cli
