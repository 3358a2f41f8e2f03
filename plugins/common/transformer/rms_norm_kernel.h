// The fused RMSNorm op: x * rsqrt(mean(x^2) + eps) * weight over the last dimension in one pass
// forward and two back (float32 or bfloat16 x, float32 weight, computed in float).
#pragma once

#include <ATen/core/Tensor.h>

#include "vector_lanes.h"

namespace kforge::builtin::models {

/// True when fused_rms_norm takes (x, weight): CPU x in float32 or bfloat16, float32 weight of x's
/// last dimension.
bool fused_rms_norm_applies(const at::Tensor& x, const at::Tensor& weight);

/// The normalised x in x's dtype; differentiable in x and weight.
at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

/// The kernels' vector width in use: the widest this CPU runs, unless a test chose another.
lanes::Width rms_norm_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_rms_norm_width(lanes::Width width);

}  // namespace kforge::builtin::models
