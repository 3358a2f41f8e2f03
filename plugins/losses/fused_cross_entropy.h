// Fused token cross-entropy: one autograd op whose backward writes softmax - onehot in a single pass,
// with no log_softmax tensor and no zero-filled gradient (CPU float, double and bfloat16 logits),
// vectorised at the widest width the CPU runs.
#pragma once

#include <ATen/core/Tensor.h>

#include "vector_lanes.h"

namespace kforge::builtin::losses {

/// The float/bfloat16 row kernels' vector width in use: the widest this CPU runs, unless
/// set_row_kernel_width chose another.
lanes::Width row_kernel_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_row_kernel_width(lanes::Width width);

/// True when fused_cross_entropy_sum handles `logits`: a contiguous CPU float/double/bfloat16 matrix.
bool fused_cross_entropy_supports(const at::Tensor& logits);

/// Sum of logsumexp(row) - row[label] over tokens whose label != kIgnoreIndex, differentiable in
/// `logits` [tokens, vocab]; labels int64 [tokens]. Returned as float32 (float64 for float64 logits);
/// exactly 0, with a zero gradient, when every label is ignored.
at::Tensor fused_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& labels);

}  // namespace kforge::builtin::losses
