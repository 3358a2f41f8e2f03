// Float8Linear: torchao's float8 training linear with the TENSORWISE recipe (KempnerForge's [train] mixed_precision =
// "fp8"), its three GEMMs computed on float8-rounded operands with fp32 accumulation.
#pragma once

#include <ATen/ATen.h>

namespace kforge::builtin::models {

/// True when float8_linear takes (x, weight): float32 or bfloat16 strided x [..., in] and weight [out, in] on one
/// device.
bool float8_linear_applies(const at::Tensor& x, const at::Tensor& weight);

/// y = x W^T as torchao's Float8Linear computes it (Float8LinearRecipeName.TENSORWISE, dynamic scaling) for
/// KempnerForge's bf16 operands. Each operand is rounded to bf16 (KempnerForge's parameters and activations are bf16),
/// scaled by s = format max / amax of the whole tensor (in float64, then float32: torchao's amax_to_scale) and rounded
/// to float8 (round_to_float8). The GEMMs, with torchao's operand formats:
///   forward      y  = x_e4m3   W_e4m3^T  / (s_x s_W)
///   backward     dx = dy_e5m2  W_e4m3    / (s_dy s_W)
///                dW = dy_e5m2^T x_e4m3   / (s_dy s_x)
/// each a product summed in fp32 (two float8 values multiply exactly in fp32), multiplied by the product of the
/// reciprocal scales (what torch._scaled_mm takes as scale_a and scale_b) and rounded to bf16, its out_dtype. y is
/// bfloat16 (as at::linear's under bf16 autocast); dx has x's dtype and dW the weight's. No state: the scales are
/// recomputed each call. Throws sdk::Error unless float8_linear_applies.
at::Tensor float8_linear(const at::Tensor& x, const at::Tensor& weight);

}  // namespace kforge::builtin::models
