// Float8 rounding through exact fp32 tensor ops (see float8_cast.h).
#include "float8_cast.h"

#include <kforge/sdk/error.h>

namespace kforge::builtin::models {
namespace {

struct Layout {
  int64_t mantissa_bits;
  int64_t min_exponent;  ///< of the smallest normal value, 2^(1 - bias); below it the spacing stays 2^(that - mantissa)
  float max;
};

Layout layout(Float8Format format) {
  return format == Float8Format::E4M3 ? Layout{3, -6, 448.0f} : Layout{2, -14, 57344.0f};
}

}  // namespace

float float8_max(Float8Format format) { return layout(format).max; }

// |x| <= max lies in [2^e, 2^(e+1)) with e = frexp's exponent - 1, where the format's values are spaced
// q = 2^(max(e, min_exponent) - mantissa_bits): |x| / q is exact (q is a power of two), at::round rounds it half to
// even, and times q is exact again. q is built from its fp32 bits, so no libm call rounds it.
at::Tensor round_to_float8(const at::Tensor& x, Float8Format format) {
  if (x.scalar_type() != at::kFloat) {
    throw sdk::Error(std::string("round_to_float8: needs a float32 tensor, got ") + c10::toString(x.scalar_type()));
  }
  const Layout f = layout(format);
  const at::Tensor magnitude = x.abs().clamp_max(f.max);  // NaN passes through clamp
  const at::Tensor exponent = std::get<1>(at::frexp(magnitude)) - 1;
  const at::Tensor spacing =
      (exponent.clamp_min(f.min_exponent) - f.mantissa_bits + 127).to(at::kInt).bitwise_left_shift(23).view(at::kFloat);
  return at::copysign(at::round(magnitude / spacing) * spacing, x);
}

}  // namespace kforge::builtin::models
