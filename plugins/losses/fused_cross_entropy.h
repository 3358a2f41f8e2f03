// Fused token cross-entropy: one autograd op whose backward writes softmax - onehot in a single pass,
// with no log_softmax tensor and no zero-filled gradient (CPU float, double and bfloat16 logits).
#pragma once

#include <ATen/core/Tensor.h>

namespace kforge::losses {

/// True when fused_cross_entropy_sum handles `logits`: a contiguous CPU float/double/bfloat16 matrix.
bool fused_cross_entropy_supports(const at::Tensor& logits);

/// Sum of logsumexp(row) - row[label] over tokens whose label != kIgnoreIndex, differentiable in
/// `logits` [tokens, vocab]; labels int64 [tokens]. Returned as float32 (float64 for float64 logits);
/// exactly 0, with a zero gradient, when every label is ignored.
at::Tensor fused_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& labels);

}  // namespace kforge::losses
