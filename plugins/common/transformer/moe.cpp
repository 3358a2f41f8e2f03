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
    dropped_ = (last_.weights.ne(0) & weights.eq(0)).sum();
  } else {
    dropped_ = at::Tensor();
  }
  at::Tensor out = group_ ? combine_parallel(x_flat, weights, last_.indices) : combine(x_flat, weights, last_.indices);
  if (shared_expert_) out = out + shared_expert_->forward(x_flat);
  return out.view(x.sizes());
}

void MoE::shard_experts(const sdk::ExpertParallel& group) {
  const int64_t per_rank = num_experts_ / group.size();
  if (per_rank * group.size() != num_experts_) {
    throw sdk::ConfigError("MoE layer: [model] num_experts = " + std::to_string(num_experts_) +
                           " is not divisible by [distributed] ep = " + std::to_string(group.size()));
  }
  experts_->keep(group.rank() * per_rank, per_rank);
  group_ = &group;
}

at::Tensor MoE::gradient_scale(const at::Tensor& all_experts, const at::Tensor& experts, int64_t tokens,
                               int64_t top_k) const {
  const double avg_tokens = static_cast<double>(tokens * top_k) / static_cast<double>(num_experts_);
  const at::Tensor scale = avg_tokens / at::bincount(all_experts, {}, num_experts_).clamp_min(1).to(at::kDouble);
  return scale.index_select(0, experts);
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
    const at::Tensor rows = gradient_scale(flat_experts, flat_experts.index_select(0, order), tokens, top_k);
    expert_out = expert_out * rows.to(expert_out.options()).unsqueeze(-1);
  }
  expert_out = expert_out * sorted_weights.unsqueeze(-1).to(expert_out.scalar_type());
  // In the experts' dtype (bf16 under autocast, whatever x_flat's).
  return at::zeros_like(x_flat, expert_out.options()).index_add(0, token_ids, expert_out);
}

at::Tensor MoE::combine_parallel(const at::Tensor& x_flat, const at::Tensor& weights, const at::Tensor& indices) {
  const sdk::ExpertParallel& group = *group_;
  const int64_t tokens = x_flat.size(0);
  const int64_t top_k = indices.size(1);
  const int64_t per_rank = num_experts_ / group.size();
  const int64_t first = group.rank() * per_rank;
  // This rank's share of the tokens (every rank of the group holds the same ones), its pairs sorted by expert, hence
  // by the rank holding it.
  const at::Tensor x_share = group.share(x_flat);
  const at::Tensor w_share = group.share(weights);
  const int64_t begin = tokens * group.rank() / group.size();
  const at::Tensor pair_experts = indices.narrow(0, begin, x_share.size(0)).reshape(-1);
  const at::Tensor order = std::get<1>(at::sort(pair_experts, /*stable=*/true, /*dim=*/0, /*descending=*/false));
  const at::Tensor token_ids = order.div(top_k, "floor");
  const at::Tensor sorted_experts = pair_experts.index_select(0, order);
  const at::Tensor to_rank = at::bincount(sorted_experts.div(per_rank, "floor"), {}, group.size()).cpu();
  const std::vector<int64_t> send(to_rank.data_ptr<int64_t>(), to_rank.data_ptr<int64_t>() + group.size());
  const std::vector<int64_t> recv = group.exchange_counts(send);
  const at::Tensor rows = group.all_to_all(x_share.index_select(0, token_ids), send, recv);
  const at::Tensor row_experts = group.all_to_all(sorted_experts, send, recv);

  // The rows received, from every rank, grouped by this rank's experts.
  const at::Tensor local = row_experts - first;
  const at::Tensor by_expert = std::get<1>(at::sort(local, /*stable=*/true, /*dim=*/0, /*descending=*/false));
  const at::Tensor count_tensor = at::bincount(local, {}, per_rank).cpu();
  const std::vector<int64_t> counts(count_tensor.data_ptr<int64_t>(), count_tensor.data_ptr<int64_t>() + per_rank);
  at::Tensor grouped = experts_->forward_grouped(rows.index_select(0, by_expert), counts);
  if (gradient_scale_ && is_training()) {
    const at::Tensor scale = gradient_scale(indices.reshape(-1), row_experts.index_select(0, by_expert), tokens, top_k);
    grouped = grouped * scale.to(grouped.options()).unsqueeze(-1);
  }
  const at::Tensor outputs = at::zeros_like(grouped).index_copy(0, by_expert, grouped);  // back in received order

  at::Tensor returned = group.all_to_all(outputs, recv, send);  // in this rank's sorted pair order
  returned = returned * w_share.reshape(-1).index_select(0, order).unsqueeze(-1).to(returned.scalar_type());
  return group.unite(at::zeros_like(x_share, returned.options()).index_add(0, token_ids, returned), tokens);
}

}  // namespace kforge::builtin::models
