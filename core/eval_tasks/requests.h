// Requests: the prompts lm-eval-harness builds for a task's documents (few-shot examples drawn with a seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval_tasks/task_spec.h"

namespace kforge::eval_tasks {

/// One scoring request of a document: loglikelihood of `continuation` after `context` (multiple_choice, one per
/// option; loglikelihood), of the whole `continuation` (loglikelihood_rolling: context is ""), or a greedy
/// generation after `context` (generate_until: continuation is "").
struct Request {
  size_t doc = 0;
  size_t option = 0;
  std::string context;
  std::string continuation;
};

/// The requests of the first `limit` documents (0: all), in document then option order. The few-shot prefix of each
/// document is lm-eval-harness 0.4's: description, then `num_fewshot` examples drawn by random.Random(seed).sample
/// from the few-shot documents (one task-wide generator, documents in order; drawn from the eval documents, one more
/// is drawn and the document itself dropped), each rendered as its prompt + target_delimiter + its gold target +
/// fewshot_delimiter.
std::vector<Request> build_requests(const TaskSpec& task, int64_t num_fewshot, size_t limit, uint64_t seed);

}  // namespace kforge::eval_tasks
