// Float8 rounding (OCP 8-bit floating point, e4m3fn and e5m2), held in fp32: the values a float8 tensor holds.
#pragma once

#include <ATen/ATen.h>

namespace kforge::builtin::models {

/// The two OCP FP8 formats torchao trains with: e4m3fn (4 exponent bits, 3 mantissa bits, bias 7, largest 448, no
/// infinity) for inputs and weights, e5m2 (5, 2, bias 15, largest 57344) for gradients.
enum class Float8Format { E4M3, E5M2 };

/// The format's largest finite value (torch.finfo(float8_e4m3fn / float8_e5m2).max).
float float8_max(Float8Format format);

/// x (float32, any device) rounded to the format as torchao's to_fp8_saturated does, the result in float32: clamped to
/// +-max first (so infinities and anything beyond saturate), then rounded to the nearest value of the format, ties to
/// the even mantissa, subnormals included, the sign kept (a negative that rounds to zero is -0), NaN stays NaN.
at::Tensor round_to_float8(const at::Tensor& x, Float8Format format);

}  // namespace kforge::builtin::models
