// AvgPoolAdapter: ceil-mode average pooling of the patch grid (divisor: the cells inside the grid).
#include "avgpool_adapter.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "patch_grid.h"

namespace kforge::vision {

AvgPoolAdapter::AvgPoolAdapter(int64_t in_dim, int64_t out_dim, int64_t pool_window) : PoolingAdapter(pool_window) {
  proj_ = register_module("proj", torch::nn::Linear(in_dim, out_dim));
}

int64_t AvgPoolAdapter::output_num_tokens(int64_t num_input_tokens, int64_t window) const {
  return pooled_token_count(num_input_tokens, window, "avgpool");
}

at::Tensor AvgPoolAdapter::forward(const at::Tensor& x, int64_t window) {
  check_pool_window(window);
  const int64_t b = x.size(0), c = x.size(2);
  const int64_t side = patch_grid_side(x.size(1), "avgpool");
  const int64_t w = std::min(window, side);
  // With no padding, ceil_mode's edge windows are clipped to the grid and divided by the cells they hold.
  const at::Tensor grid = x.view({b, side, side, c}).permute({0, 3, 1, 2});
  const at::Tensor pooled = at::avg_pool2d(grid, {w, w}, {w, w}, {0, 0}, /*ceil_mode=*/true,
                                           /*count_include_pad=*/false);
  return proj_->forward(pooled.flatten(2).transpose(1, 2));
}

}  // namespace kforge::vision
