// The e4m3 codec of FSDP's float8 all-gather (see float8_codes.h).
#include "parallel/float8_codes.h"

#include <cmath>
#include <limits>

namespace kforge::parallel {
namespace {

constexpr int64_t kFiniteCodes = 127;  ///< codes 0x00-0x7e: the non-negative finite e4m3fn values, ascending

/// The value of each of the 256 codes (0x7f and 0xff are NaN), float32: exponent field e = code >> 3 & 15 and
/// mantissa m = code & 7 mean (1 + m / 8) 2^(e - 7), or m 2^-9 for e = 0.
const at::Tensor& code_values() {
  static const at::Tensor values = [] {
    at::Tensor t = at::empty({256}, at::kFloat);
    float* v = t.data_ptr<float>();
    for (int code = 0; code < 256; ++code) {
      const int e = code >> 3 & 15, m = code & 7;
      const float magnitude = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
      v[code] = (code & 0x7f) == 0x7f ? std::numeric_limits<float>::quiet_NaN() : code & 0x80 ? -magnitude : magnitude;
    }
    return t;
  }();
  return values;
}

}  // namespace

at::Tensor bf16_amax(const at::Tensor& shard) {
  if (shard.numel() == 0) return at::zeros({}, shard.options().dtype(at::kFloat));
  return shard.detach().to(at::kBFloat16).to(at::kFloat).abs().max();
}

at::Tensor e4m3_scale(const at::Tensor& amax) {
  return (448.0 / amax.to(at::kDouble).clamp_min(1e-12)).to(at::kFloat);
}

// Rounding by the table: a = |y| clamped to 448 lies between the finite values below and above it (searchsorted), and
// the nearer one wins, the even code on a tie. Both distances are exact in float32 (Sterbenz: the neighbours are
// within a factor of two of a, or a neighbour is 0).
at::Tensor encode_e4m3(const at::Tensor& shard, const at::Tensor& scale) {
  const at::Tensor y = shard.detach().reshape({-1}).to(at::kBFloat16).to(at::kFloat) * scale.to(shard.device());
  const at::Tensor table = code_values().narrow(0, 0, kFiniteCodes).to(y.device());
  const at::Tensor a = y.abs().clamp_max(448.0f);
  const at::Tensor above = at::searchsorted(table, a.nan_to_num(0.0f)).clamp_max(kFiniteCodes - 1);
  const at::Tensor below = (above - 1).clamp_min(0);
  const at::Tensor up = table.index_select(0, above) - a, down = a - table.index_select(0, below);
  const at::Tensor take_above = (up < down) | ((up == down) & (above.remainder(2) == 0));
  const at::Tensor magnitude = at::where(take_above, above, below);
  const at::Tensor sign = y.signbit().to(at::kLong) * 0x80;
  return (at::where(a.isnan(), at::full_like(magnitude, 0x7f), magnitude) + sign).to(at::kByte);
}

at::Tensor decode_e4m3(const at::Tensor& codes, const at::Tensor& scale) {
  const at::Tensor values = code_values().to(codes.device()).index_select(0, codes.reshape({-1}).to(at::kLong));
  return values * scale.to(codes.device()).reciprocal();
}

}  // namespace kforge::parallel
