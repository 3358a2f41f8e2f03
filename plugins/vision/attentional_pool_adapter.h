// AttentionalPoolAdapter: `attentional_pool` (Molmo2's connector): per window x window patch window,
// multi-head attention with the window's mean as the query and its patches as keys and values, then
// o_proj and out_proj.
#pragma once

#include <torch/nn/modules/linear.h>

#include "pooling_adapter.h"

namespace kforge::vision {

/// Parameters (KempnerForge's names, all biased): q_proj, k_proj, v_proj, o_proj (in_dim, in_dim),
/// out_proj (out_dim, in_dim). A g x g grid gives (g / window)^2 tokens, row-major over the windows; a
/// grid not divisible by the window is refused (check_attentional_pool_grid, patch_grid.h).
class AttentionalPoolAdapter : public PoolingAdapter {
 public:
  /// Throws sdk::ConfigError naming the key when pool_window or pool_heads is not positive or in_dim is
  /// not a multiple of pool_heads.
  AttentionalPoolAdapter(int64_t in_dim, int64_t out_dim, int64_t pool_window = 2, int64_t pool_heads = 16);
  using PoolingAdapter::forward;
  using PoolingAdapter::output_num_tokens;
  int64_t output_num_tokens(int64_t num_input_tokens, int64_t window) const override;
  /// x (B, g*g, in_dim) -> (B, (g / window)^2, out_dim).
  at::Tensor forward(const at::Tensor& x, int64_t window) override;

 private:
  int64_t heads_, head_dim_;
  torch::nn::Linear q_proj_{nullptr}, k_proj_{nullptr}, v_proj_{nullptr}, o_proj_{nullptr}, out_proj_{nullptr};
};

}  // namespace kforge::vision
