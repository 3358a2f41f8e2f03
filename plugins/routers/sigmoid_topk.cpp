// SigmoidTopK: sigmoid scores with a balancing bias, its EMA update, optional sequence aux loss.
#include "sigmoid_topk.h"

#include "routing_math.h"

namespace kforge::builtin::routers {

SigmoidTopK::SigmoidTopK(const sdk::RouterSpec& spec, const SigmoidTopKSettings& settings)
    : spec_(spec), settings_(settings), rate_factor_(bias_rate_factor(settings.bias_schedule, 0, 0)) {
  gate_ = register_module("gate", std::make_shared<Gate>(spec.dim, spec.num_experts));
  expert_bias_ = register_parameter("expert_bias", at::zeros({spec.num_experts}));
  const double uniform = 1.0 / static_cast<double>(spec.num_experts);
  expert_ema_ = register_buffer("expert_ema", at::full({spec.num_experts}, uniform));
}

void SigmoidTopK::set_step(int64_t step, int64_t max_steps) {
  rate_factor_ = bias_rate_factor(settings_.bias_schedule, step, max_steps);
}

sdk::RouterOutput SigmoidTopK::route(const at::Tensor& x) {
  const at::Tensor logits = gate_->forward(x);
  const at::Tensor scores = at::sigmoid(logits + expert_bias_);
  auto [weights, indices] = top_k_normalised(scores, spec_.top_k);
  const at::Tensor counts = assignment_counts(indices, spec_.num_experts);
  at::Tensor aux = at::zeros({}, logits.options());
  if (settings_.sequence_aux_loss_weight > 0) {
    const at::Tensor affinity = scores / scores.sum(-1, /*keepdim=*/true);
    aux = settings_.sequence_aux_loss_weight * switch_balance_loss(counts, affinity, spec_.top_k);
  }
  if (is_training()) update_bias(counts, x.size(0));
  return {weights, indices, aux, router_z_loss(logits), counts};
}

void SigmoidTopK::update_bias(const at::Tensor& counts, int64_t tokens) {
  at::NoGradGuard no_grad;
  const at::Tensor utilization = counts / (static_cast<double>(tokens * spec_.top_k) + 1e-8);
  expert_ema_.lerp_(utilization.to(expert_ema_.scalar_type()), 1.0 - kEmaDecay);
  const double target = 1.0 / static_cast<double>(spec_.num_experts);
  expert_bias_.add_(kBiasUpdateRate * rate_factor_ * (target - expert_ema_.to(expert_bias_.scalar_type())));
}

}  // namespace kforge::builtin::routers
