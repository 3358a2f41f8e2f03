// SoftmaxTopK: softmax scores, renormalised top-k, Switch aux loss, router z-loss.
#include "softmax_topk.h"

#include "routing_math.h"

namespace kforge::builtin::routers {

SoftmaxTopK::SoftmaxTopK(const sdk::RouterSpec& spec) : spec_(spec) {
  gate_ = register_module("gate", std::make_shared<Gate>(spec.dim, spec.num_experts));
}

sdk::RouterOutput SoftmaxTopK::route(const at::Tensor& x) {
  const at::Tensor logits = gate_->forward(x);
  const at::Tensor probs = at::softmax(logits, -1);
  auto [weights, indices] = top_k_normalised(probs, spec_.top_k);
  const at::Tensor counts = assignment_counts(indices, spec_.num_experts);
  return {weights, indices, switch_balance_loss(counts, probs, spec_.top_k), router_z_loss(logits), counts};
}

}  // namespace kforge::builtin::routers
