// Token cross-entropy math shared by the losses: summed per chunk, averaged over non-ignored labels.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kforge::builtin::losses {

/// Sum of -log softmax(logits)[label] over tokens whose label != kIgnoreIndex: by the fused kernel
/// when it supports the logits (chunking is then moot), else by ATen `chunk_tokens` rows at a time
/// (<= 0: all at once). logits [tokens, vocab], labels int64 [tokens].
/// The sum is returned in at least float32; it is exactly 0 (zero gradient) when all are ignored.
at::Tensor summed_token_cross_entropy(const at::Tensor& logits, const at::Tensor& labels, int64_t chunk_tokens);

/// `sum` divided by the number of non-ignored labels, or `sum` itself (0) when there are none.
at::Tensor mean_over_valid_tokens(const at::Tensor& sum, const at::Tensor& labels);

}  // namespace kforge::builtin::losses
