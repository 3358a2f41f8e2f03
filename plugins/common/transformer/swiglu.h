// SwiGLU's element-wise part, silu(gate) * up, as one autograd op: one pass forward, one pass back
// (float32 or bfloat16, computed in float), instead of silu, mul and their three backward kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include "vector_lanes.h"

namespace kforge::builtin::models {

/// silu(gate) * up for tensors of one shape, dtype and device; differentiable in both. float32 and
/// bfloat16 CPU tensors take the fused kernel unless `fused` is false ([model] fused_kernels); other dtypes
/// (float64 gradient checks) and other devices the composite.
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up, bool fused = true);

/// The kernels' vector width in use: the widest this CPU runs, unless a test chose another.
lanes::Width swiglu_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_swiglu_width(lanes::Width width);

}  // namespace kforge::builtin::models
