// RoPE tables and rotate-half application.
#include "rope.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <string>
#include <vector>

#include "rope_kernel.h"

namespace kforge::builtin::models {

RopeTables::RopeTables(int64_t head_dim, int64_t max_seq_len, double theta) {
  // Same arithmetic as KempnerForge / HF Llama: fp32 inverse frequencies, fp32 outer product.
  const at::Tensor exponents = at::arange(0, head_dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(head_dim);
  const at::Tensor inv_freq = at::pow(theta, exponents).reciprocal();
  const at::Tensor positions = at::arange(max_seq_len, at::kLong).to(at::kFloat);
  const at::Tensor angles = at::outer(positions, inv_freq);
  cos_ = angles.cos();
  sin_ = angles.sin();
}

std::pair<at::Tensor, at::Tensor> RopeTables::slice(int64_t seq_len, const at::Tensor& like) {
  if (seq_len > cos_.size(0)) {
    throw sdk::ConfigError("sequence length " + std::to_string(seq_len) + " exceeds [model] max_seq_len = " +
                           std::to_string(cos_.size(0)) + " (the RoPE table length)");
  }
  if (!cached_cos_.defined() || cached_cos_.device() != like.device() ||
      cached_cos_.scalar_type() != like.scalar_type()) {
    cached_cos_ = cos_.to(like.device(), like.scalar_type());
    cached_sin_ = sin_.to(like.device(), like.scalar_type());
  }
  return {cached_cos_.narrow(0, 0, seq_len), cached_sin_.narrow(0, 0, seq_len)};
}

std::pair<at::Tensor, at::Tensor> RopeTables::gather(const at::Tensor& positions, const at::Tensor& like,
                                                     int64_t span) {
  const auto [cos, sin] = slice(span > 0 ? span : positions.size(1), like);
  const at::Tensor index = positions.reshape({-1});
  const std::vector<int64_t> shape{positions.size(0), 1, positions.size(1), cos.size(1)};
  return {cos.index_select(0, index).view(shape), sin.index_select(0, index).view(shape)};
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool fused) {
  if (fused && fused_rope_applies(x, cos, sin)) return fused_rope(x, cos, sin);
  const int64_t half = x.size(-1) / 2;
  const at::Tensor x1 = x.narrow(-1, 0, half);
  const at::Tensor x2 = x.narrow(-1, half, half);
  // (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)
  return at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

}  // namespace kforge::builtin::models
