// Data parallelism over one process group: bucketed gradient averaging and the agreement on a step's outcome.
#include "parallel/data_parallel.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace kforge::parallel {

void average_gradients(const dist::Group& group, const std::vector<sdk::NamedParameter>& params, int64_t bucket_bytes) {
  if (group.size() == 1) return;
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> bucket;
  int64_t bytes = 0;
  auto flush = [&] {
    if (bucket.empty()) return;
    std::vector<at::Tensor> parts;
    for (const at::Tensor& g : bucket) parts.push_back(g.reshape({-1}));
    at::Tensor flat = at::cat(parts);
    group.all_reduce(flat);
    flat.div_(static_cast<double>(group.size()));
    int64_t offset = 0;
    for (at::Tensor& g : bucket) {
      g.copy_(flat.narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
    bucket.clear();
    bytes = 0;
  };
  for (const auto& p : params) {
    at::Tensor param = p.tensor;
    if (!param.requires_grad()) continue;  // frozen: no gradient on any rank, so no update
    // Every rank must contribute every gradient: one a rank's batch did not reach counts as zero.
    if (!param.grad().defined()) param.mutable_grad() = at::zeros_like(param);
    at::Tensor g = param.mutable_grad();
    if (!bucket.empty() && g.scalar_type() != bucket.front().scalar_type()) flush();
    bucket.push_back(g);
    bytes += g.numel() * static_cast<int64_t>(g.element_size());
    if (bytes >= bucket_bytes) flush();
  }
  flush();
}

AgreedStep average_step_result(const dist::Group& group, StepResult local, int64_t trained_tokens) {
  if (group.size() == 1) return {std::move(local), trained_tokens};
  const bool finite = std::isfinite(local.loss) && std::isfinite(local.grad_norm);
  // Token counts are exact in float64 up to 2^53.
  at::Tensor t = at::tensor({finite ? local.loss : 0.0, finite ? 0.0 : 1.0, static_cast<double>(trained_tokens)},
                            at::kDouble);
  group.all_reduce(t);
  const auto global_tokens = static_cast<int64_t>(t[2].item<double>());
  if (t[1].item<double>() > 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {{finite ? nan : local.loss, nan}, global_tokens};  // skipped together; a rank's own bad value stays visible
  }
  return {{t[0].item<double>() / static_cast<double>(group.size()), local.grad_norm}, global_tokens};
}

bool any_in_group(const dist::Group& group, bool flag) {
  if (group.size() == 1) return flag;
  at::Tensor t = at::tensor({flag ? 1 : 0}, at::kInt);
  group.all_reduce(t, dist::Reduce::Max);
  return t.item<int>() != 0;
}

}  // namespace kforge::parallel
