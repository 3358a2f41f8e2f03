// VitAttention: unmasked multi-head self-attention of the vision towers.
#include "vit_attention.h"

#include <ATen/ATen.h>

#include <cmath>

namespace kforge::vision {

VitAttention::VitAttention(const VitConfig& config)
    : heads_(config.num_attention_heads), head_dim_(config.hidden_size / config.num_attention_heads) {
  const int64_t h = config.hidden_size;
  q_proj_ = register_module("q_proj", torch::nn::Linear(h, h));
  k_proj_ = register_module("k_proj", torch::nn::Linear(h, h));
  v_proj_ = register_module("v_proj", torch::nn::Linear(h, h));
  out_proj_ = register_module("out_proj", torch::nn::Linear(h, h));
}

at::Tensor VitAttention::forward(const at::Tensor& x) {
  const int64_t b = x.size(0), s = x.size(1);
  auto heads = [&](const at::Tensor& t) { return t.view({b, s, heads_, head_dim_}).transpose(1, 2); };
  const at::Tensor q = heads(q_proj_->forward(x)) * (1.0 / std::sqrt(static_cast<double>(head_dim_)));
  const at::Tensor k = heads(k_proj_->forward(x));
  const at::Tensor v = heads(v_proj_->forward(x));
  const at::Tensor probs = at::softmax(at::matmul(q, k.transpose(-2, -1)), -1);
  const at::Tensor out = at::matmul(probs, v).transpose(1, 2).reshape({b, s, heads_ * head_dim_});
  return out_proj_->forward(out);
}

}  // namespace kforge::vision
