// Routing math: top-k renormalisation, assignment counts, Switch balance loss, router z-loss.
#include "routing_math.h"

namespace kforge::builtin::routers {

std::pair<at::Tensor, at::Tensor> top_k_normalised(const at::Tensor& scores, int64_t k) {
  auto [weights, indices] = at::topk(scores, k, /*dim=*/-1);
  return {weights / weights.sum(-1, /*keepdim=*/true), indices};
}

at::Tensor assignment_counts(const at::Tensor& indices, int64_t num_experts) {
  return at::bincount(indices.reshape(-1), {}, num_experts).to(at::kFloat);
}

at::Tensor switch_balance_loss(const at::Tensor& counts, const at::Tensor& probs, int64_t top_k) {
  const int64_t num_experts = probs.size(-1);
  const at::Tensor f = counts.to(probs.scalar_type()) / static_cast<double>(probs.size(0) * top_k);
  return static_cast<double>(num_experts) * (f * probs.mean(0)).sum();
}

at::Tensor router_z_loss(const at::Tensor& logits) { return at::logsumexp(logits, -1).pow(2).mean(); }

}  // namespace kforge::builtin::routers
