// AttentionalPoolAdapter: mean-query multi-head attention within each window of the patch grid.
#include "attentional_pool_adapter.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <cmath>

#include "patch_grid.h"

namespace kforge::vision {

AttentionalPoolAdapter::AttentionalPoolAdapter(int64_t in_dim, int64_t out_dim, int64_t pool_window, int64_t pool_heads)
    : PoolingAdapter(pool_window), heads_(pool_heads) {
  if (pool_heads <= 0 || in_dim % pool_heads != 0) {
    throw sdk::ConfigError("[adapter] pool_heads = " + std::to_string(pool_heads) +
                           ": must be positive and divide the vision feature dimension (" + std::to_string(in_dim) +
                           ")");
  }
  head_dim_ = in_dim / pool_heads;
  q_proj_ = register_module("q_proj", torch::nn::Linear(in_dim, in_dim));
  k_proj_ = register_module("k_proj", torch::nn::Linear(in_dim, in_dim));
  v_proj_ = register_module("v_proj", torch::nn::Linear(in_dim, in_dim));
  o_proj_ = register_module("o_proj", torch::nn::Linear(in_dim, in_dim));
  out_proj_ = register_module("out_proj", torch::nn::Linear(in_dim, out_dim));
}

int64_t AttentionalPoolAdapter::output_num_tokens(int64_t num_input_tokens, int64_t window) const {
  check_attentional_pool_grid(num_input_tokens, window);
  return pooled_token_count(num_input_tokens, window, "attentional_pool");
}

at::Tensor AttentionalPoolAdapter::forward(const at::Tensor& x, int64_t window) {
  check_attentional_pool_grid(x.size(1), window);
  const int64_t b = x.size(0), c = x.size(2), w = window;
  const int64_t per = patch_grid_side(x.size(1), "attentional_pool") / w;
  const int64_t m = b * per * per, cells = w * w;
  // (B, per*w, per*w, C) -> (M, w*w, C): each window's patches contiguous, windows row-major.
  const at::Tensor windows = x.view({b, per, w, per, w, c}).permute({0, 1, 3, 2, 4, 5}).reshape({m, cells, c});
  auto heads = [&](const at::Tensor& t) { return t.view({m, -1, heads_, head_dim_}).transpose(1, 2); };
  const at::Tensor q = heads(q_proj_->forward(windows.mean(1, /*keepdim=*/true)));
  const at::Tensor k = heads(k_proj_->forward(windows));
  const at::Tensor v = heads(v_proj_->forward(windows));
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim_));
  const at::Tensor probs = at::softmax(at::matmul(q, k.transpose(-2, -1)) * scale, -1);  // (M, H, 1, w*w)
  const at::Tensor pooled = at::matmul(probs, v).transpose(1, 2).reshape({m, c});
  return out_proj_->forward(o_proj_->forward(pooled).view({b, per * per, c}));
}

}  // namespace kforge::vision
