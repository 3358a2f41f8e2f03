// Task metrics: per-document items, lm-eval's aggregations (mean, perplexity, weighted_perplexity, bits_per_byte),
// mean_stderr and bootstrap_stderr.
#include "eval_tasks/task_metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <map>

#include "eval_tasks/python_random.h"
#include "eval_tasks/python_text.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

/// The code point at text[i] and its byte length (an invalid byte counts as one character of its own).
std::pair<char32_t, size_t> code_point(const std::string& text, size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (n == 1 || i + n > text.size()) return {b, 1};
  char32_t cp = b & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return {cp, n};
}

double mean(const std::vector<double>& xs) {  // sum(arr) / len(arr), summed left to right
  double sum = 0;
  for (double x : xs) sum += x;
  return sum / static_cast<double>(xs.size());
}

double sample_stddev(const std::vector<double>& xs) {
  const double mu = mean(xs);
  double sum = 0;
  for (double x : xs) sum += (x - mu) * (x - mu);
  return std::sqrt(sum / static_cast<double>(xs.size() - 1));
}

std::optional<double> mean_stderr(const std::vector<double>& xs) {
  if (xs.size() < 2) return std::nullopt;
  return sample_stddev(xs) / std::sqrt(static_cast<double>(xs.size()));
}

double perplexity(const std::vector<double>& lls) { return std::exp(-mean(lls)); }

std::optional<double> bootstrap_stderr(const std::function<double(const std::vector<double>&)>& f,
                                       const std::vector<double>& xs, int64_t iters) {
  const int64_t chunk = std::min<int64_t>(1000, iters);
  if (chunk <= 0 || xs.size() < 2) return std::nullopt;
  std::vector<double> results;
  std::vector<double> resample(xs.size());
  for (int64_t i = 0; i < iters / chunk; ++i) {
    PythonRandom rng(static_cast<uint64_t>(i));
    for (int64_t k = 0; k < chunk; ++k) {
      const std::vector<size_t> picks = rng.choices(xs.size(), xs.size());
      for (size_t j = 0; j < picks.size(); ++j) resample[j] = xs[picks[j]];
      results.push_back(f(resample));
    }
  }
  return results.size() < 2 ? std::nullopt : std::optional<double>(sample_stddev(results));
}

/// sum(a) / sum(b) of the (value, weight) items.
double weighted_mean(const std::vector<double>& values, const std::vector<double>& weights) {
  double a = 0, b = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    a += values[i];
    b += weights[i];
  }
  return a / b;
}

size_t argmax(const std::vector<double>& xs) {  // np.argmax: the first of equal maxima
  size_t best = 0;
  for (size_t i = 1; i < xs.size(); ++i) {
    if (xs[i] > xs[best]) best = i;
  }
  return best;
}

}  // namespace

int64_t count_chars(const std::string& text) {
  int64_t n = 0;
  for (size_t i = 0; i < text.size(); i += code_point(text, i).second) ++n;
  return n;
}

int64_t count_words(const std::string& text) {
  int64_t pieces = 1;
  bool in_space = false;
  for (size_t i = 0; i < text.size();) {
    const auto [cp, n] = code_point(text, i);
    const bool space = py_isspace(cp);  // the characters re's \s matches in a str pattern
    if (space && !in_space) ++pieces;
    in_space = space;
    i += n;
  }
  return pieces;
}

std::vector<std::pair<std::string, MetricValue>> task_metrics(const TaskSpec& task, const std::vector<DocScore>& scores,
                                                              int64_t bootstrap_iters) {
  std::map<std::string, std::vector<double>> items, weights;
  for (size_t d = 0; d < scores.size(); ++d) {
    const Doc& doc = task.docs[d];
    const DocScore& s = scores[d];
    switch (task.output_type) {
      case OutputType::MultipleChoice: {
        std::vector<double> normed;
        for (size_t o = 0; o < s.loglikelihoods.size(); ++o) {
          const std::string& option = doc.partial() ? doc.queries[o] : doc.choices[o];
          normed.push_back(s.loglikelihoods[o] / static_cast<double>(count_chars(option)));
        }
        items["acc"].push_back(static_cast<int64_t>(argmax(s.loglikelihoods)) == doc.gold ? 1.0 : 0.0);
        items["acc_norm"].push_back(static_cast<int64_t>(argmax(normed)) == doc.gold ? 1.0 : 0.0);
        break;
      }
      case OutputType::Loglikelihood:
        items["perplexity"].push_back(s.loglikelihoods[0]);
        items["acc"].push_back(s.greedy[0] ? 1.0 : 0.0);
        break;
      case OutputType::LoglikelihoodRolling: {
        const double ll = s.loglikelihoods[0];
        const auto bytes = static_cast<double>(doc.page.size());
        for (const char* m : {"word_perplexity", "byte_perplexity", "bits_per_byte", "token_perplexity"}) {
          items[m].push_back(ll);
        }
        weights["word_perplexity"].push_back(static_cast<double>(count_words(doc.page)));
        weights["byte_perplexity"].push_back(bytes);
        weights["bits_per_byte"].push_back(bytes);
        weights["token_perplexity"].push_back(static_cast<double>(s.tokens));
        break;
      }
      case OutputType::GenerateUntil:
        items["exact_match"].push_back(py_strip(s.generated) == py_strip(doc.answer) ? 1.0 : 0.0);
        break;
    }
  }
  std::vector<std::pair<std::string, MetricValue>> out;
  for (const std::string& name : task.metrics) {
    const std::vector<double>& xs = items.at(name);
    MetricValue v;
    if (name == "perplexity") {
      v = {perplexity(xs), bootstrap_stderr(perplexity, xs, bootstrap_iters), false};
    } else if (name == "bits_per_byte") {
      v = {-weighted_mean(xs, weights.at(name)) / std::log(2.0), std::nullopt, false};
    } else if (weights.count(name)) {
      v = {std::exp(-weighted_mean(xs, weights.at(name))), std::nullopt, false};
    } else {
      v = {mean(xs), mean_stderr(xs), true};
    }
    out.emplace_back(name, v);
  }
  return out;
}

MetricValue pooled_mean(const std::vector<MetricValue>& values, const std::vector<int64_t>& sizes) {
  if (values.empty() || values.size() != sizes.size()) throw sdk::Error("pooled_mean: one size per value");
  double weighted = 0, total = 0, pooled = 0;
  bool all_stderr = true;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto n = static_cast<double>(sizes[i]);
    weighted += values[i].value * n;
    total += n;
    all_stderr = all_stderr && values[i].stderr_value.has_value();
    if (all_stderr) pooled += (n - 1) * (*values[i].stderr_value * *values[i].stderr_value) * n;
  }
  MetricValue out{weighted / total, std::nullopt, values[0].higher_is_better};
  const double dof = total - static_cast<double>(values.size());
  if (all_stderr && dof > 0) out.stderr_value = std::sqrt(pooled / dof / total);
  return out;
}

}  // namespace kforge::eval_tasks
