// VisionAdapter: the connector from vision features (B, N, in_dim) to the language model's embedding
// space (B, output_num_tokens(N), out_dim).
#pragma once

#include <torch/nn/module.h>

namespace kforge::vision {

class VisionAdapter : public torch::nn::Module {
 public:
  /// Tokens out for `num_input_tokens` in, without a forward: N for the projection adapters, the pooled
  /// count for the pooling ones (which throw sdk::ConfigError for a grid they cannot pool).
  virtual int64_t output_num_tokens(int64_t num_input_tokens) const { return num_input_tokens; }
  virtual at::Tensor forward(const at::Tensor& x) = 0;
};

}  // namespace kforge::vision
