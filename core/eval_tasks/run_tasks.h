// run_tasks: score tasks with a Scorer and gather lm-eval-harness's results layout (and, on request, every request).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval_tasks/scorer.h"
#include "eval_tasks/task_spec.h"

namespace kforge::eval_tasks {

struct RunOptions {
  size_t limit = 0;                    ///< documents per task (0: all)
  std::optional<int64_t> num_fewshot;  ///< overrides task.toml's (not for loglikelihood_rolling tasks)
  uint64_t seed = 1234;                ///< the few-shot sampler's (lm-eval's fewshot_seed)
  int64_t bootstrap_iters = 100000;    ///< perplexity's stderr resamples (0: none)
};

/// Scores every task and returns {"results", "groups", "group_subtasks", "configs", "versions", "n-shot",
/// "higher_is_better", "n-samples"} as lm-eval-harness 0.4 writes them (metric keys "acc,none", "acc_stderr,none";
/// "N/A" where there is no stderr); a task's `group` gets the size-weighted mean of its subtasks' mean metrics.
/// `samples`, when given, receives one JSON object per request (tokens, loglikelihood, greedy flag or generation).
/// `progress` receives lines such as "arc_easy: 40/400 requests".
nlohmann::json run_tasks(const std::vector<TaskSpec>& tasks, const Scorer& scorer, const RunOptions& options,
                         std::vector<nlohmann::json>* samples = nullptr,
                         const std::function<void(const std::string&)>& progress = nullptr);

/// The task names of "a,b,c" (each once, in order); throws sdk::ConfigError on an empty name.
std::vector<std::string> split_task_names(const std::string& list);

/// lm-eval's results table: one line per task and metric (value and stderr), groups after their tasks.
std::string results_table(const nlohmann::json& results);

/// The flat metrics a training run logs: "eval/<task>/<metric>" for every task and group metric (stderrs left out).
std::vector<std::pair<std::string, double>> flat_metrics(const nlohmann::json& results);

}  // namespace kforge::eval_tasks
