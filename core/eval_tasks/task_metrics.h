// Task metrics: lm-eval-harness 0.4's per-document metrics, their aggregations and standard errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval_tasks/task_spec.h"

namespace kforge::eval_tasks {

/// What the model gave for one document.
struct DocScore {
  std::vector<double> loglikelihoods;  ///< one per option (multiple_choice), else one (rolling: the windows' sum)
  std::vector<bool> greedy;            ///< alongside
  int64_t tokens = 0;                  ///< loglikelihood_rolling: the document's tokens
  std::string generated;               ///< generate_until: the cut generation
};

struct MetricValue {
  double value = 0;
  std::optional<double> stderr_value;  ///< none where lm-eval reports "N/A"
  bool higher_is_better = true;
};

/// The task's metrics (task.metrics, in its order) over `scores` (the first scores.size() documents):
/// acc = argmax loglikelihood == gold; acc_norm = argmax loglikelihood / len(option in Unicode characters) == gold
/// (the option: the choice, or with partial scoring its query, as lm-eval's doc_to_choice); loglikelihood acc = greedy,
/// perplexity = exp(-mean ll); rolling word/byte/token perplexity = exp(-sum ll / sum count) with words =
/// len(re.split(r"\s+", page)) and bytes = UTF-8 bytes of the page (the document's "page", else its text), bits_per_byte = -sum ll / sum bytes / ln 2; exact_match =
/// (strip(generated) == strip(answer)). Means have stderr = sample stddev / sqrt(n) (none for n = 1); perplexity's
/// is lm-eval's bootstrap (`bootstrap_iters` resamples by random.Random(i).choices in chunks of 1000; none at 0);
/// the weighted ones have none.
std::vector<std::pair<std::string, MetricValue>> task_metrics(const TaskSpec& task, const std::vector<DocScore>& scores,
                                                              int64_t bootstrap_iters);

/// lm-eval's group aggregate of one mean metric: the size-weighted mean of the subtasks' values, and their pooled
/// stderr sqrt(sum((n_i - 1) * se_i^2 * n_i) / (sum n_i - k) / sum n_i) (none when a subtask has none).
MetricValue pooled_mean(const std::vector<MetricValue>& values, const std::vector<int64_t>& sizes);

/// Unicode characters (code points) of UTF-8 text, as Python's len(str).
int64_t count_chars(const std::string& text);
/// len(re.split(r"\s+", text)) with Python's Unicode whitespace.
int64_t count_words(const std::string& text);

}  // namespace kforge::eval_tasks
