// RandomEncoder: the `random` vision encoder, a weightless deterministic stub for tests and smoke runs,
// output for output KempnerForge's RandomVisionEncoder.
#pragma once

#include <kforge/sdk/vision_encoder.h>

namespace kforge::vision {

/// Image i of a batch gets a (num_tokens, feature_dim) float32 tensor of standard normal draws,
/// torch.randn from a CPU generator seeded with seed + trunc(sum(pixels[i]) * 1e6) (the sum in the
/// pixels' dtype, the product in double, truncated toward zero; a negative seed wraps modulo 2^64 as
/// torch.Generator.manual_seed does). The same image therefore gives the same tokens on any call and any
/// rank; a different one almost surely differs. A non-finite pixel sum throws sdk::Error naming the
/// image. Nothing is learned: there are no parameters, and the output does not depend on the pixels
/// through autograd.
class RandomEncoder : public sdk::VisionEncoder {
 public:
  /// KempnerForge's defaults: 16 tokens of 768 features, seed 0. Sizes must be positive.
  explicit RandomEncoder(int64_t num_tokens = 16, int64_t feature_dim = 768, int64_t seed = 0);
  int64_t feature_dim() const override { return feature_dim_; }
  int64_t num_tokens() const override { return num_tokens_; }
  /// pixels (B, ...) of any shape with a batch dimension -> (B, num_tokens, feature_dim) float32 on
  /// the pixels' device.
  at::Tensor forward(const at::Tensor& pixels) override;

 private:
  int64_t num_tokens_, feature_dim_, seed_;
};

}  // namespace kforge::vision
