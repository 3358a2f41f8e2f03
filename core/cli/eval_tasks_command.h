// kforge eval --tasks: downstream tasks scored on a checkpoint, as lm-eval-harness scores them.
#pragma once

#include <cxxopts.hpp>
#include <string>
#include <vector>

namespace kforge::cli {

/// Adds --tasks, --task-dir, --limit, --num-fewshot, --seed, --batch-size, --bootstrap-iters, --output, --log-samples
/// and --tokenizer to kforge eval's options.
void add_eval_tasks_options(cxxopts::Options& options);

/// The first task option given (e.g. "--limit") when --tasks is not, else "": the eval loss takes none of them.
std::string stray_task_option(const cxxopts::ParseResult& args);

/// Scores --tasks of --task-dir with the checkpoint in --checkpoint (rebuilt with `overrides`), prints lm-eval's
/// results table and writes the results JSON to --output. Returns the exit code (2: bad arguments, task files,
/// checkpoint or tokenizer; 1: scoring failed).
int run_eval_tasks(const cxxopts::Options& options, const cxxopts::ParseResult& args,
                   const std::vector<std::string>& overrides);

}  // namespace kforge::cli
