// Routing math shared by the routers: top-k selection, assignment counts, balance and z losses.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

namespace kforge::builtin::routers {

/// The k largest scores per row, renormalised to sum 1, and their expert ids: (weights, indices).
std::pair<at::Tensor, at::Tensor> top_k_normalised(const at::Tensor& scores, int64_t k);
/// Float [num_experts]: how many (token, slot) pairs of `indices` [T, K] chose each expert.
at::Tensor assignment_counts(const at::Tensor& indices, int64_t num_experts);
/// Switch balance loss E * sum_i f_i P_i with f_i = counts_i / (T K) and P_i = mean_t probs[t, i].
at::Tensor switch_balance_loss(const at::Tensor& counts, const at::Tensor& probs, int64_t top_k);
/// ST-MoE router z-loss: mean over tokens of logsumexp(logits)^2.
at::Tensor router_z_loss(const at::Tensor& logits);

}  // namespace kforge::builtin::routers
