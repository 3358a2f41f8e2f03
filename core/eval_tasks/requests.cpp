// build_requests: few-shot prefixes, then each output type's contexts and continuations.
#include "eval_tasks/requests.h"

#include "eval_tasks/python_random.h"

namespace kforge::eval_tasks {
namespace {

/// A few-shot example: its prompt, the target delimiter and its gold target.
std::string render_example(const TaskSpec& task, const Doc& doc) {
  const std::string& td = task.target_delimiter;
  switch (task.output_type) {
    case OutputType::MultipleChoice:
      return doc.partial() ? doc.queries[doc.gold] + td + doc.choices[0] : doc.queries[0] + td + doc.choices[doc.gold];
    case OutputType::Loglikelihood:
      return doc.queries[0] + td + doc.choices[0];
    case OutputType::GenerateUntil:
      return doc.queries[0] + td + doc.answer;
    case OutputType::LoglikelihoodRolling:
      break;
  }
  return doc.text;
}

std::string fewshot_prefix(const TaskSpec& task, const Doc& doc, int64_t num_fewshot, PythonRandom& rng) {
  std::string prefix = task.description;
  if (num_fewshot <= 0) return prefix;
  const auto k = static_cast<size_t>(num_fewshot);
  const size_t drawn = std::min(task.fewshot.size(), task.separate_fewshot ? k : k + 1);
  std::vector<size_t> picked(drawn);
  if (task.first_n_fewshot) {
    for (size_t i = 0; i < drawn; ++i) picked[i] = i;  // lm-eval's FirstNSampler: docs[:n], no draw
  } else {
    picked = rng.sample(task.fewshot.size(), drawn);
  }
  size_t taken = 0;
  for (size_t i : picked) {
    const Doc& example = task.fewshot[i];
    if (taken == k || (!task.separate_fewshot && example.raw == doc.raw)) continue;
    prefix += render_example(task, example) + task.fewshot_delimiter;
    ++taken;
  }
  return prefix;
}

}  // namespace

std::vector<Request> build_requests(const TaskSpec& task, int64_t num_fewshot, size_t limit, uint64_t seed) {
  PythonRandom rng(seed);
  const size_t n = limit == 0 ? task.docs.size() : std::min(limit, task.docs.size());
  std::vector<Request> out;
  for (size_t d = 0; d < n; ++d) {
    const Doc& doc = task.docs[d];
    if (task.output_type == OutputType::LoglikelihoodRolling) {
      out.push_back({d, 0, "", doc.text});
      continue;
    }
    const std::string prefix = fewshot_prefix(task, doc, num_fewshot, rng);
    if (task.output_type == OutputType::GenerateUntil) {
      out.push_back({d, 0, prefix + doc.queries[0], ""});
      continue;
    }
    for (size_t o = 0; o < doc.options(); ++o) {
      const std::string& query = doc.queries[doc.queries.size() == 1 ? 0 : o];
      const std::string& choice = doc.choices[doc.choices.size() == 1 ? 0 : o];
      out.push_back({d, o, prefix + query, task.target_delimiter + choice});
    }
  }
  return out;
}

}  // namespace kforge::eval_tasks
