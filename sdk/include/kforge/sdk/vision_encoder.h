// VisionEncoder: a vision-language model's image tower, selected by [vision_encoder] type: pixels (B, C, H, W) in,
// (B, num_tokens, feature_dim) features out.
#pragma once

#include <ATen/core/grad_mode.h>
#include <torch/nn/module.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::sdk {

/// The pixels an encoder expects: RGB in [0, 1] resized to image_size x image_size (0: any size), then each channel c
/// normalised as (x - mean[c]) / std[c]. The defaults are SigLIP's statistics, KempnerForge's image preprocessing.
struct PixelFormat {
  int64_t image_size = 0;
  std::array<float, 3> mean = {0.5f, 0.5f, 0.5f};
  std::array<float, 3> std = {0.5f, 0.5f, 0.5f};
};

class VisionEncoder : public torch::nn::Module {
 public:
  virtual int64_t feature_dim() const = 0;
  /// What the data path makes of an image for this encoder.
  virtual PixelFormat pixel_format() const { return {}; }
  virtual int64_t num_tokens() const = 0;
  /// pixels (B, C, H, W) -> (B, num_tokens(), feature_dim()).
  virtual at::Tensor forward(const at::Tensor& pixels) = 0;
  /// forward() under at::NoGradGuard: nothing is saved for backward and the result has no grad_fn, so a frozen
  /// encoder costs no activation memory; the result is an ordinary tensor the adapter can train on.
  at::Tensor forward_frozen(const at::Tensor& pixels) {
    at::NoGradGuard no_grad;
    return forward(pixels);
  }
  /// The tensors of a Hugging Face checkpoint (name -> tensor) the host read from `origin` (the model.safetensors
  /// of [vision_encoder] path): copies each parameter from the tensor of the same name, refusing (sdk::Error naming
  /// `origin`) a missing tensor or another shape before any copy. Returns the names it did not use, sorted, for the
  /// host to report. The default refuses: an encoder without pretrained weights.
  virtual std::vector<std::string> load_hf_weights(const std::map<std::string, at::Tensor>& tensors,
                                                   const std::string& origin) {
    (void)tensors;
    throw Error(origin + ": this vision encoder has no pretrained weights to load; set [vision_encoder] path = \"\"");
  }
};

}  // namespace kforge::sdk
