// Expert capacity: KempnerForge's token dropping for moe_capacity_factor > 0.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace kforge::builtin::models {

/// max(1, ceil(tokens * top_k / num_experts * capacity_factor)).
int64_t expert_capacity(int64_t tokens, int64_t top_k, int64_t num_experts, double capacity_factor);

/// weights [T, K] with the overflow zeroed: per top-k slot and per expert, the first `capacity`
/// tokens (in token order) choosing that expert in that slot keep their weight, later ones get 0
/// (no renormalisation; the residual carries a fully dropped token).
at::Tensor drop_over_capacity(const at::Tensor& weights, const at::Tensor& indices, int64_t num_experts,
                              int64_t capacity);

}  // namespace kforge::builtin::models
