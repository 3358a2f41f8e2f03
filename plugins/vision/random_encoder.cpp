// RandomEncoder: per-image seeded standard normal tokens.
#include "random_encoder.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <kforge/sdk/error.h>

#include <cmath>

namespace kforge::vision {

RandomEncoder::RandomEncoder(int64_t num_tokens, int64_t feature_dim, int64_t seed)
    : num_tokens_(num_tokens), feature_dim_(feature_dim), seed_(seed) {
  if (num_tokens <= 0 || feature_dim <= 0) {
    throw sdk::ConfigError("[vision_encoder] random: num_tokens = " + std::to_string(num_tokens) +
                           ", feature_dim = " + std::to_string(feature_dim) + ": both must be positive");
  }
}

at::Tensor RandomEncoder::forward(const at::Tensor& pixels) {
  if (pixels.dim() < 1) throw sdk::Error("vision encoder random: pixel_values needs a batch dimension");
  const int64_t batch = pixels.size(0);
  const at::Tensor sums = pixels.detach().flatten(1).sum(1).to(at::kCPU);
  at::Tensor out = at::empty({batch, num_tokens_, feature_dim_}, at::kFloat);
  for (int64_t i = 0; i < batch; ++i) {
    const double scaled = sums[i].item<double>() * 1e6;
    if (!(std::fabs(scaled) < 9e18)) {  // NaN, infinite, or past int64 (as python's int() of it would fail)
      throw sdk::Error("vision encoder random: image " + std::to_string(i) + " of the batch has pixel sum " +
                       std::to_string(scaled / 1e6) + ", which seeds no generator (expected finite pixel values)");
    }
    const auto seed = static_cast<uint64_t>(seed_ + static_cast<int64_t>(scaled));
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    out[i].copy_(at::randn({num_tokens_, feature_dim_}, generator, at::kFloat));
  }
  return out.to(pixels.device());
}

}  // namespace kforge::vision
