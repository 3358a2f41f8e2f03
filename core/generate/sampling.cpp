// Sampling: the filters and the draw.
#include "generate/sampling.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <string>

#include "kforge/sdk/error.h"

namespace kforge::generate {

void check(const SamplingOptions& o) {
  if (o.temperature < 0) throw sdk::Error("temperature must be >= 0 (0 = greedy), got " + std::to_string(o.temperature));
  if (o.top_k < 0) throw sdk::Error("top_k must be >= 0 (0 = off), got " + std::to_string(o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1)) throw sdk::Error("top_p must be in (0, 1] (1 = off), got " + std::to_string(o.top_p));
}

at::Tensor filter_logits(const at::Tensor& logits, const SamplingOptions& o) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  at::Tensor l = logits.to(at::kFloat) / o.temperature;
  if (o.top_k > 0) {
    const int64_t k = std::min(o.top_k, l.size(-1));
    const at::Tensor kth = std::get<0>(l.topk(k, -1)).narrow(-1, k - 1, 1);
    l = l.masked_fill(l < kth, kNegInf);
  }
  if (o.top_p < 1.0) {
    auto [sorted, order] = l.sort(-1, /*descending=*/true);
    const at::Tensor probs = at::softmax(sorted, -1);
    const at::Tensor remove = (probs.cumsum(-1) - probs) >= o.top_p;
    l = l.scatter(-1, order, sorted.masked_fill(remove, kNegInf));
  }
  return l;
}

at::Tensor sample(const at::Tensor& logits, const SamplingOptions& o, at::Generator& generator) {
  if (o.temperature == 0) return logits.argmax(-1).cpu();
  const at::Tensor probs = at::softmax(filter_logits(logits.cpu(), o), -1);
  return at::multinomial(probs, 1, /*replacement=*/false, generator).squeeze(-1);
}

}  // namespace kforge::generate
