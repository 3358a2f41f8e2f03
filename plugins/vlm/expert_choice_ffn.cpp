// ExpertChoiceFFN: the routed tokens, the scores, the Gumbel noise, each expert's pick and the weighted sum.
#include "expert_choice_ffn.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace kforge::vlm {

namespace models = builtin::models;

namespace {

// Gumbel(0, 1) samples shaped as `like`, drawn from the CPU generator (which the host replays when it recomputes a
// block) and moved to like's device and dtype. The clamps keep both logs finite.
at::Tensor gumbel_like(const at::Tensor& like) {
  const at::Tensor u = at::rand(like.sizes(), at::TensorOptions().dtype(at::kFloat)).clamp_min(1e-9);
  return (-(-u.log()).clamp_min(1e-9).log()).to(like.options());
}

}  // namespace

ExpertChoiceFFN::ExpertChoiceFFN(const models::ModelConfig& c, int64_t experts, double capacity_factor,
                                 bool gumbel_noise)
    : capacity_factor_(capacity_factor), gumbel_noise_(gumbel_noise) {
  const models::LinearBackend linear = models::resolve_linear_backend(c.linear_backend);
  gate_ = register_module("gate", std::make_shared<models::Linear>(c.dim, experts, linear));
  const auto holder = register_module("experts", std::make_shared<torch::nn::Module>("Experts"));
  for (int64_t e = 0; e < experts; ++e) {
    experts_.push_back(holder->register_module(
        std::to_string(e), std::make_shared<models::MLP>(c.dim, c.computed_expert_ffn_hidden_dim(), c.activation,
                                                         linear, c.fused_kernels)));
  }
}

int64_t ExpertChoiceFFN::tokens_per_expert(int64_t n) const {
  const auto wanted = static_cast<int64_t>(std::ceil(capacity_factor_ * static_cast<double>(n)));
  return std::min(std::max<int64_t>(wanted, 1), n);
}

at::Tensor ExpertChoiceFFN::forward(const at::Tensor& x, const at::Tensor& routed) {
  if (!routed.defined()) return route(x);
  const at::Tensor index = routed.nonzero().squeeze(1);
  return at::zeros_like(x).index_copy(0, index, route(x.index_select(0, index)));
}

at::Tensor ExpertChoiceFFN::route(const at::Tensor& x) {
  if (x.size(0) == 0) {  // nothing to pick from (clips without a real frame): no expert runs
    coverage_ = at::zeros({}, x.options().dtype(at::kFloat));
    return at::zeros_like(x);
  }
  at::Tensor logits = gate_->forward(x);  // (N, E)
  if (is_training() && gumbel_noise_) logits = logits + gumbel_like(logits) - gumbel_like(logits);
  // Each expert (a row of the transposed scores) picks its tokens: (E, k) scores and token indices.
  const auto [scores, picked] = logits.sigmoid().t().topk(tokens_per_expert(x.size(0)), /*dim=*/1);
  at::Tensor out = at::zeros_like(x);
  for (size_t e = 0; e < experts_.size(); ++e) {
    const at::Tensor tokens = picked[static_cast<int64_t>(e)];
    const at::Tensor y = experts_[e]->forward(x.index_select(0, tokens));
    out = out.index_add(0, tokens, (scores[static_cast<int64_t>(e)].unsqueeze(1) * y).to(out.scalar_type()));
  }
  {
    at::NoGradGuard no_grad;
    coverage_ = at::zeros({x.size(0)}, x.options().dtype(at::kFloat)).index_fill_(0, picked.flatten(), 1.0).mean();
  }
  return out;
}

}  // namespace kforge::vlm
