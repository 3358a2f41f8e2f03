// Separable bilinear resize with torch's source-index rule (src = (dst + 0.5) * in / out - 0.5, clamped at 0;
// neighbours floor(src) and the next one, clamped at the edge), in float, rows first then columns, fused with
// the normalisation of each output value.
#include "image_text_io/image_transform.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::image_text {
namespace {

struct LinearTap {
  int64_t low = 0;
  int64_t high = 0;
  float low_weight = 1;
  float high_weight = 0;
};

// The taps of every output coordinate along one axis (as aten's upsample_bilinear2d, align_corners=False).
std::vector<LinearTap> linear_taps(int64_t in, int64_t out) {
  std::vector<LinearTap> taps(static_cast<size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    const float source = std::max(scale * (static_cast<float>(o) + 0.5f) - 0.5f, 0.0f);
    const int64_t low = std::min(static_cast<int64_t>(std::floor(source)), in - 1);
    const float lambda = std::clamp(source - static_cast<float>(low), 0.0f, 1.0f);
    taps[o] = {low, low < in - 1 ? low + 1 : low, 1.0f - lambda, lambda};
  }
  return taps;
}

}  // namespace

Normalization siglip_normalization() { return {{0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f}}; }

Normalization clip_normalization() {
  return {{0.48145466f, 0.4578275f, 0.40821073f}, {0.26862954f, 0.26130258f, 0.27577711f}};
}

at::Tensor to_pixel_values(const RgbImage& image, int64_t height, int64_t width, const Normalization& norm) {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<size_t>(image.width * image.height * 3)) {
    throw sdk::Error(fmt::format("to_pixel_values: an image of {}x{} pixels with {} bytes", image.width, image.height,
                                 image.pixels.size()));
  }
  if (height <= 0 || width <= 0) {
    throw sdk::Error(fmt::format("to_pixel_values: the output size {}x{} must be positive", width, height));
  }
  const std::vector<LinearTap> rows = linear_taps(image.height, height);
  const std::vector<LinearTap> cols = linear_taps(image.width, width);
  // Horizontal pass: every source row at the output width, per channel.
  std::vector<float> horizontal(static_cast<size_t>(3 * image.height * width));
  for (int64_t y = 0; y < image.height; ++y) {
    const uint8_t* row = image.pixels.data() + y * image.width * 3;
    for (int64_t x = 0; x < width; ++x) {
      const LinearTap& t = cols[x];
      for (int64_t c = 0; c < 3; ++c) {
        horizontal[(c * image.height + y) * width + x] = t.low_weight * static_cast<float>(row[t.low * 3 + c]) +
                                                         t.high_weight * static_cast<float>(row[t.high * 3 + c]);
      }
    }
  }
  at::Tensor out = at::empty({3, height, width}, at::kFloat);
  float* dst = out.data_ptr<float>();
  for (int64_t c = 0; c < 3; ++c) {
    const float mean = norm.mean[c];
    const float std = norm.std[c];
    const float* plane = horizontal.data() + c * image.height * width;
    for (int64_t y = 0; y < height; ++y) {
      const LinearTap& t = rows[y];
      const float* low = plane + t.low * width;
      const float* high = plane + t.high * width;
      float* line = dst + (c * height + y) * width;
      for (int64_t x = 0; x < width; ++x) {
        line[x] = ((t.low_weight * low[x] + t.high_weight * high[x]) / 255.0f - mean) / std;
      }
    }
  }
  return out;
}

}  // namespace kforge::image_text
