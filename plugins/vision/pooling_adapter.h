// PoolingAdapter: an adapter that pools the patch grid by a window (avgpool, attentional_pool). The window
// is [adapter] pool_window unless a call names another: KempnerForge's per-call pool_window, so one
// connector pools images (e.g. 2x2) and video frames (3x3) with the same weights.
#pragma once

#include <kforge/sdk/adapter.h>

#include "patch_grid.h"

namespace kforge::vision {

class PoolingAdapter : public sdk::Adapter {
 public:
  /// Throws sdk::ConfigError naming [adapter] pool_window when it is not positive.
  explicit PoolingAdapter(int64_t pool_window) : window_(pool_window) { check_pool_window(pool_window); }
  int64_t pool_window() const { return window_; }
  int64_t output_num_tokens(int64_t num_input_tokens) const override {
    return output_num_tokens(num_input_tokens, window_);
  }
  at::Tensor forward(const at::Tensor& x) override { return forward(x, window_); }
  /// Tokens out for `num_input_tokens` in at `window`; throws sdk::ConfigError for a grid it cannot pool.
  int64_t output_num_tokens(int64_t num_input_tokens, int64_t window) const override = 0;
  /// x (B, g*g, in_dim) pooled at `window` -> (B, output_num_tokens(g*g, window), out_dim).
  at::Tensor forward(const at::Tensor& x, int64_t window) override = 0;

 private:
  int64_t window_;
};

}  // namespace kforge::vision
