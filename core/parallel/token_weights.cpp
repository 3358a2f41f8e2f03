// Token weights (see token_weights.h).
#include "parallel/token_weights.h"

#include <ATen/ATen.h>

namespace kforge::parallel {

int64_t trained_tokens(const at::Tensor& labels) { return labels.ne(-100).sum().item<int64_t>(); }

std::vector<double> token_weights(const std::vector<int64_t>& counts, const dist::Group& group) {
  int64_t local = 0;
  for (const int64_t c : counts) local += c;
  at::Tensor total = at::tensor({local}, at::kLong);
  if (group.size() > 1) group.all_reduce(total);
  const int64_t all = total.item<int64_t>();
  const double batches = static_cast<double>(counts.size()) * group.size();
  std::vector<double> weights;
  for (const int64_t c : counts) weights.push_back(all == 0 ? 1.0 : static_cast<double>(c) * batches / all);
  return weights;
}

}  // namespace kforge::parallel
