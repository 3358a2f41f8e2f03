// VisionEncoder: what every vision encoder gives the VLM: (B, C, H, W) pixels in, (B, num_tokens,
// feature_dim) patch features out, and a frozen forward that records no autograd graph.
#pragma once

#include <torch/nn/module.h>

namespace kforge::vision {

class VisionEncoder : public torch::nn::Module {
 public:
  virtual int64_t feature_dim() const = 0;
  virtual int64_t num_tokens() const = 0;
  /// pixels (B, C, H, W) -> (B, num_tokens(), feature_dim()).
  virtual at::Tensor forward(const at::Tensor& pixels) = 0;
  /// forward() under at::NoGradGuard: nothing is saved for backward and the result has no grad_fn, so a
  /// frozen encoder costs no activation memory; the result is an ordinary tensor the adapter can train on.
  at::Tensor forward_frozen(const at::Tensor& pixels);
};

}  // namespace kforge::vision
