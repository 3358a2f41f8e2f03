// The fused RoPE op: rotate-half rotation of q or k in one pass forward and one back (float32 or bfloat16, computed in
// float), instead of two narrows, four multiplies, an add, a subtract, a cat and their backward fills and adds.
#pragma once

#include <ATen/core/Tensor.h>

#include "vector_lanes.h"

namespace kforge::builtin::models {

/// True when fused_rope takes (x, cos, sin): a CPU x (B, H, S, head_dim) in float32 or bfloat16 whose last dimension
/// is contiguous (a transposed projection qualifies), with an even head_dim, and cos/sin in x's dtype, (S, head_dim /
/// 2) or (B, 1, S, head_dim / 2), contiguous along their last dimension.
bool fused_rope_applies(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

/// (x1 cos - x2 sin, x2 cos + x1 sin) for x = (x1, x2) split at head_dim / 2: a new contiguous (B, H, S, head_dim)
/// tensor in x's dtype, differentiable in x (the tables are constants). Its gradient for x has x's memory layout, so
/// the transposed projection's gradient needs no copy.
at::Tensor fused_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

/// The kernels' vector width in use: the widest this CPU runs, unless a test chose another.
lanes::Width rope_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_rope_width(lanes::Width width);

}  // namespace kforge::builtin::models
