// An RGB image to a model's pixel_values: bilinear resize to the configured size with torch's convention
// (F.interpolate(mode="bilinear", align_corners=False, antialias=False) on the 0..255 values), then
// (v / 255 - mean) / std per channel, into a float32 [3, height, width] tensor.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>

#include "image_text_io/image_decode.h"

namespace kforge::image_text {

struct Normalization {
  std::array<float, 3> mean;
  std::array<float, 3> std;
};

/// SigLIP / SigLIP2: mean = std = 0.5 (pixel values in [-1, 1]).
Normalization siglip_normalization();
/// CLIP (OpenAI): mean (0.48145466, 0.4578275, 0.40821073), std (0.26862954, 0.26130258, 0.27577711).
Normalization clip_normalization();

/// Resizes and normalises `image` (which must be non-empty) to [3, height, width] float32.
at::Tensor to_pixel_values(const RgbImage& image, int64_t height, int64_t width, const Normalization& norm);

}  // namespace kforge::image_text
