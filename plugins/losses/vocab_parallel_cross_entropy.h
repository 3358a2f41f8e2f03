// Vocabulary-parallel cross-entropy: the token cross-entropy of logits split by vocabulary over the tensor-parallel
// group, computed without ever gathering a row's whole logits.
#pragma once

#include <ATen/core/Tensor.h>
#include <kforge/sdk/tensor_parallel.h>

#include <cstdint>

namespace kforge::builtin::losses {

struct VocabParallelSums {
  at::Tensor cross_entropy;  ///< sum over tokens whose label != kIgnoreIndex of -log softmax(row)[label]
  at::Tensor logsumexp;      ///< [tokens]: each row's logsumexp over the whole vocabulary
};

/// logits [tokens, width]: this rank's columns [rank*width, (rank+1)*width) of rows over width*tp.size() classes;
/// labels int64 [tokens] (global class ids). Per chunk of `chunk_tokens` rows (<= 0: all at once): one all-reduce of
/// the rows' maxima, one of their sums of exponentials and one of the label logits (each rank holds some). Computed
/// in at least float32; differentiable in logits (each rank's gradient is its columns').
VocabParallelSums vocab_parallel_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                               const sdk::TensorParallel& tp, int64_t chunk_tokens);

}  // namespace kforge::builtin::losses
