// SwiGLU's element-wise part, silu(gate) * up, as one autograd op: one pass forward, one pass back
// (float32 or bfloat16, computed in float), instead of silu, mul and their three backward kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include "vector_lanes.h"

namespace kforge::models {

/// silu(gate) * up for same-shape, same-dtype (float32 or bfloat16) CPU tensors; differentiable in both.
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

/// The kernels' vector width in use: the widest this CPU runs, unless a test chose another.
plugins::lanes::Width swiglu_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_swiglu_width(plugins::lanes::Width width);

}  // namespace kforge::models
