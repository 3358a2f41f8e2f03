// TaskSpec: one downstream task of a task directory (<task-dir>/<name>/task.toml and its JSON Lines documents).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kforge::eval_tasks {

/// lm-eval-harness's request types (multiple_choice scores one loglikelihood request per choice).
enum class OutputType { MultipleChoice, Loglikelihood, LoglikelihoodRolling, GenerateUntil };

/// "multiple_choice", "loglikelihood", "loglikelihood_rolling" or "generate_until".
const char* output_type_name(OutputType type);

/// One document, read from its JSON line. A multiple-choice document has one query and a choice per option, or (partial
/// scoring) a query per option and one continuation; `options()` counts them.
struct Doc {
  nlohmann::json raw;                ///< the line as read (few-shot sampling excludes a document equal to this one)
  std::vector<std::string> queries;  ///< multiple_choice, loglikelihood, generate_until: the prompt(s)
  std::vector<std::string> choices;  ///< the continuation(s): choices, or the one continuation
  int64_t gold = 0;                  ///< multiple_choice: the index of the right option
  std::string text;                  ///< loglikelihood_rolling: what is scored
  std::string page;                  ///< loglikelihood_rolling: what words and bytes are counted on ("page", else text)
  std::string answer;                ///< generate_until
  size_t options() const { return std::max(queries.size(), choices.size()); }
  bool partial() const { return queries.size() > 1; }
};

struct TaskSpec {
  std::string name;
  int64_t version = 0;
  OutputType output_type = OutputType::MultipleChoice;
  int64_t num_fewshot = 0;
  std::string description;
  std::string fewshot_delimiter = "\n\n";
  std::string target_delimiter = " ";
  std::vector<std::string> until;
  int64_t max_gen_toks = 256;
  std::vector<std::string> metrics;  ///< in the order task.toml lists them
  std::string group;                 ///< "" when the task is in no group
  /// Few-shot examples come from fewshot_docs, another file than eval_docs (else from the eval documents).
  bool separate_fewshot = false;
  /// fewshot_sampler = "first_n": the first num_fewshot examples in file order (lm-eval's FirstNSampler, MMLU's);
  /// else ("default") drawn by random.Random(seed).sample.
  bool first_n_fewshot = false;
  std::vector<Doc> docs;             ///< eval_docs, in file order
  std::vector<Doc> fewshot;          ///< fewshot_docs, or the eval documents again
};

/// The metrics an output type can report (all of them when task.toml lists none).
const std::vector<std::string>& known_metrics(OutputType type);

/// Reads `task_dir`/`name`/task.toml and its documents. Throws sdk::ConfigError naming the file (and line) of a
/// missing or mistyped key, an unknown key, output type or metric, or a document line that is not the output type's
/// shape.
TaskSpec load_task(const std::filesystem::path& task_dir, const std::string& name);

}  // namespace kforge::eval_tasks
