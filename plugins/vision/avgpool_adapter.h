// AvgPoolAdapter: `avgpool`, a window x window average over the square patch grid, then a biased
// projection "proj" (out_dim, in_dim).
#pragma once

#include <torch/nn/modules/linear.h>

#include "pooling_adapter.h"

namespace kforge::vision {

/// A g x g grid gives ceil(g / window)^2 tokens, row-major over the windows; a window cut by the
/// grid's bottom or right edge averages only the cells it covers (Molmo2 §A's ragged edges), and a
/// window wider than the grid averages the whole grid into one token.
class AvgPoolAdapter : public PoolingAdapter {
 public:
  AvgPoolAdapter(int64_t in_dim, int64_t out_dim, int64_t pool_window = 2);
  using PoolingAdapter::forward;
  using PoolingAdapter::output_num_tokens;
  int64_t output_num_tokens(int64_t num_input_tokens, int64_t window) const override;
  /// x (B, g*g, in_dim) -> (B, ceil(g / window)^2, out_dim).
  at::Tensor forward(const at::Tensor& x, int64_t window) override;

 private:
  torch::nn::Linear proj_{nullptr};
};

}  // namespace kforge::vision
