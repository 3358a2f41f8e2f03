// ConvertedTask: one task in kforge's task format (a task.toml and its JSON Lines documents), as a benchmark's
// converter builds it from the benchmark's public raw files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::eval_tasks {

struct ConvertedTask {
  std::string name;         ///< the task's directory and `name`, e.g. "hellaswag", "mmlu_anatomy"
  int64_t version = 0;      ///< lm-eval-harness's version of the task
  std::string output_type;  ///< "multiple_choice", "loglikelihood" or "loglikelihood_rolling"
  std::string eval_split;   ///< the eval documents' split: they go to <eval_split>.jsonl
  std::vector<nlohmann::json> eval_docs;
  std::string fewshot_split;  ///< empty: no few-shot documents; else they go to <fewshot_split>.jsonl
  std::vector<nlohmann::json> fewshot_docs;
  int64_t num_fewshot = 0;
  bool first_n_fewshot = false;  ///< lm-eval's sampler: first_n (the first examples in file order), else default
  std::string description;  ///< prepended once before the few-shot examples ("" for none)
  std::vector<std::string> metrics;
  std::string group;  ///< empty: none
};

}  // namespace kforge::eval_tasks
