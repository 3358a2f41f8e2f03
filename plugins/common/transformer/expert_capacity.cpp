// Expert capacity: the capacity formula and the per-slot, per-expert overflow mask.
#include "expert_capacity.h"

#include <algorithm>
#include <cmath>

namespace kforge::builtin::models {

int64_t expert_capacity(int64_t tokens, int64_t top_k, int64_t num_experts, double capacity_factor) {
  const double raw = static_cast<double>(tokens * top_k) / static_cast<double>(num_experts) * capacity_factor;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(raw)));
}

at::Tensor drop_over_capacity(const at::Tensor& weights, const at::Tensor& indices, int64_t num_experts,
                              int64_t capacity) {
  // one_hot [T, K, E]; its running sum over tokens gives each (token, slot) its 1-based rank among
  // the tokens that chose the same expert in the same slot.
  const at::Tensor one_hot = at::one_hot(indices, num_experts);
  const at::Tensor rank = one_hot.cumsum(0).gather(2, indices.unsqueeze(-1)).squeeze(-1);
  return weights * (rank <= capacity).to(weights.scalar_type());
}

}  // namespace kforge::builtin::models
