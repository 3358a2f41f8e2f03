// MoE: routing, capacity, grouped expert dispatch and the shared expert.
#include "moe.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>


#include "expert_capacity.h"

namespace kforge::builtin::models {

MoE::MoE(const ModelConfig& config, std::shared_ptr<sdk::Router> router)
    : num_experts_(config.num_experts),
      top_k_(config.moe_top_k),
      capacity_factor_(config.moe_capacity_factor),
      gradient_scale_(config.moe_gradient_scale) {
  if (!router) throw sdk::Error("MoE layer: [model] moe_router = \"" + config.moe_router + "\" built no router");
  const int64_t hidden = config.computed_expert_ffn_hidden_dim();
  router_ = register_module("router", std::move(router));
  const LinearBackend linear = resolve_linear_backend(config.linear_backend);
  if (config.moe_shared_experts > 0) {
    shared_expert_ = register_module(
        "shared_expert", std::make_shared<MLP>(config.dim, hidden, config.activation, linear, config.fused_kernels));
  }
  experts_ = std::make_unique<Experts>(*this, num_experts_, config.dim, hidden, config.activation,
                                       config.moe_packed_experts, linear, config.fused_kernels);
}

at::Tensor MoE::forward(const at::Tensor& x, bool decoding) {
  const at::Tensor x_flat = x.reshape({-1, x.size(-1)});
  last_ = router_->route(x_flat);
  at::Tensor weights = last_.weights;
  if (capacity_factor_ > 0 && !decoding) {
    const int64_t capacity = expert_capacity(x_flat.size(0), top_k_, num_experts_, capacity_factor_);
    weights = drop_over_capacity(weights, last_.indices, num_experts_, capacity);
  }
  at::Tensor out = combine(x_flat, weights, last_.indices);
  if (shared_expert_) out = out + shared_expert_->forward(x_flat);
  return out.view(x.sizes());
}

at::Tensor MoE::combine(const at::Tensor& x_flat, const at::Tensor& weights, const at::Tensor& indices) {
  const int64_t tokens = x_flat.size(0);
  const int64_t top_k = indices.size(1);
  if (tokens == 0) return at::zeros_like(x_flat);
  const at::Tensor flat_experts = indices.reshape(-1);
  const at::Tensor order = std::get<1>(at::sort(flat_experts, /*stable=*/true, /*dim=*/0, /*descending=*/false));
  const at::Tensor token_ids = order.div(top_k, "floor");  // pair (t, k) sits at t * K + k
  const at::Tensor sorted_weights = weights.reshape(-1).index_select(0, order);
  const at::Tensor count_tensor = at::bincount(flat_experts, {}, num_experts_).cpu();
  const std::vector<int64_t> counts(count_tensor.data_ptr<int64_t>(), count_tensor.data_ptr<int64_t>() + num_experts_);

  at::Tensor expert_out = experts_->forward_grouped(x_flat.index_select(0, token_ids), counts);
  if (gradient_scale_ && is_training()) {
    const double avg_tokens = static_cast<double>(tokens * top_k) / static_cast<double>(num_experts_);
    const at::Tensor scale = avg_tokens / count_tensor.clamp_min(1).to(at::kDouble);
    const at::Tensor rows = scale.repeat_interleave(count_tensor).to(expert_out.options());
    expert_out = expert_out * rows.unsqueeze(-1);
  }
  expert_out = expert_out * sorted_weights.unsqueeze(-1).to(expert_out.scalar_type());
  return at::zeros_like(x_flat).index_add(0, token_ids, expert_out);
}

}  // namespace kforge::builtin::models
