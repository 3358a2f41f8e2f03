// Experts: per-expert or packed storage and the grouped expert computation.
#include "experts.h"

#include <ATen/ATen.h>

#include <string>

namespace kforge::builtin::models {

Experts::Experts(torch::nn::Module& owner, int64_t num_experts, int64_t dim, int64_t hidden_dim,
                 const std::string& activation, bool packed, LinearBackend backend, bool fused)
    : num_experts_(num_experts), act_(parse_mlp_activation(activation)), fused_(fused), backend_(backend) {
  if (packed) {
    // KempnerForge's order: up_w, down_w, gate_w.
    up_w_ = owner.register_parameter("up_w", at::empty({num_experts, dim, hidden_dim}));
    down_w_ = owner.register_parameter("down_w", at::empty({num_experts, hidden_dim, dim}));
    if (act_ == MlpActivation::SwiGLU) {
      gate_w_ = owner.register_parameter("gate_w", at::empty({num_experts, dim, hidden_dim}));
    }
    return;
  }
  auto holder = owner.register_module("experts", std::make_shared<torch::nn::Module>("Experts"));
  for (int64_t e = 0; e < num_experts; ++e) {
    mlps_.push_back(
        holder->register_module(std::to_string(e), std::make_shared<MLP>(dim, hidden_dim, activation, backend, fused)));
  }
}

FfnWeights Experts::weights(int64_t e) const {
  if (!mlps_.empty()) return mlps_[static_cast<size_t>(e)]->transposed_weights();
  return {gate_w_.defined() ? gate_w_[e] : at::Tensor(), up_w_[e], down_w_[e]};
}

at::Tensor Experts::forward_grouped(const at::Tensor& x_sorted, const std::vector<int64_t>& counts) const {
  std::vector<at::Tensor> outputs;
  int64_t offset = 0;
  for (int64_t e = 0; e < num_experts_; ++e) {
    const int64_t n = counts[static_cast<size_t>(e)];
    if (n == 0) continue;
    outputs.push_back(forward(e, x_sorted.narrow(0, offset, n)));
    offset += n;
  }
  return outputs.empty() ? at::zeros_like(x_sorted) : at::cat(outputs);
}

}  // namespace kforge::builtin::models
