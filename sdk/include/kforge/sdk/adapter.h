// Adapter: a vision-language model's connector, selected by [adapter] type: vision features (B, N, in_dim) to
// the language model's embedding space (B, output_num_tokens(N), out_dim).
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

namespace kforge::sdk {

/// What the host tells the adapter it builds. Adapter-specific settings (hidden width, pooling window, ...)
/// come from the factory's config section ([adapter]).
struct AdapterSpec {
  int64_t in_dim = 0;   ///< the vision encoder's feature_dim()
  int64_t out_dim = 0;  ///< the language model's width ([model] dim)
};

class Adapter : public torch::nn::Module {
 public:
  /// features (B, N, in_dim) -> (B, output_num_tokens(N), out_dim).
  virtual at::Tensor forward(const at::Tensor& features) = 0;
  /// Tokens out for `num_input_tokens` in, without a forward (the visual-token budget). The default keeps the
  /// count (a projection); a pooling adapter throws sdk::ConfigError for a grid it cannot pool.
  virtual int64_t output_num_tokens(int64_t num_input_tokens) const { return num_input_tokens; }
  /// forward() pooling at `window` for this call instead of the configured window (KempnerForge's per-call
  /// pool_window: one connector pools images 2x2 and video frames 3x3 with the same weights). An adapter that
  /// does not pool ignores the window.
  virtual at::Tensor forward(const at::Tensor& features, int64_t window) {
    (void)window;
    return forward(features);
  }
  /// output_num_tokens() at pooling window `window`.
  virtual int64_t output_num_tokens(int64_t num_input_tokens, int64_t window) const {
    (void)window;
    return output_num_tokens(num_input_tokens);
  }
};

}  // namespace kforge::sdk
