// Experts: per-expert or packed storage and the grouped expert computation.
#include "experts.h"

#include <ATen/ATen.h>

#include <string>

namespace kforge::builtin::models {

Experts::Experts(torch::nn::Module& owner, int64_t num_experts, int64_t dim, int64_t hidden_dim,
                 const std::string& activation, bool packed, LinearBackend backend, bool fused)
    : num_experts_(num_experts),
      total_experts_(num_experts),
      act_(parse_mlp_activation(activation)),
      fused_(fused),
      backend_(backend) {
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
  holder_ = holder.get();
  for (int64_t e = 0; e < num_experts; ++e) {
    mlps_.push_back(
        holder->register_module(std::to_string(e), std::make_shared<MLP>(dim, hidden_dim, activation, backend, fused)));
  }
}

void Experts::keep(int64_t first, int64_t count) {
  at::NoGradGuard no_grad;
  if (mlps_.empty()) {
    for (at::Tensor* w : {&up_w_, &down_w_, &gate_w_}) {
      if (w->defined()) w->set_data(w->narrow(0, first, count).clone());
    }
  } else {
    for (int64_t e = 0; e < num_experts_; ++e) {
      if (e < first || e >= first + count) holder_->unregister_module(std::to_string(e));
    }
    mlps_ = std::vector<std::shared_ptr<MLP>>(mlps_.begin() + first, mlps_.begin() + first + count);
  }
  first_ = first;
  num_experts_ = count;
}

std::vector<sdk::ExpertShard> Experts::shards(const std::string& prefix) const {
  std::vector<sdk::ExpertShard> out;
  if (mlps_.empty()) {
    for (const auto& [name, w] : {std::pair{"up_w", up_w_}, {"down_w", down_w_}, {"gate_w", gate_w_}}) {
      if (!w.defined()) continue;
      std::vector<int64_t> shape = w.sizes().vec();
      shape[0] = total_experts_;
      out.push_back({prefix + name, shape, first_});
    }
    return out;
  }
  for (size_t e = 0; e < mlps_.size(); ++e) {
    for (const auto& item : mlps_[e]->named_parameters(/*recurse=*/true)) {
      out.push_back({prefix + "experts." + std::to_string(first_ + static_cast<int64_t>(e)) + "." + item.key(),
                     item.value().sizes().vec(), 0});
    }
  }
  return out;
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
  if (!outputs.empty()) return at::cat(outputs);
  // No rows (an expert-parallel rank whose experts got no token): x_sorted * 0 keeps the result in the graph, so the
  // backward still runs the exchanges; packed tensors get the zero gradient they get when another of their experts ran.
  at::Tensor none = x_sorted * 0;
  if (mlps_.empty()) {
    for (const at::Tensor& w : {up_w_, down_w_, gate_w_}) {
      if (w.defined()) none = none + w.sum() * 0;
    }
  }
  return none;
}

}  // namespace kforge::builtin::models
