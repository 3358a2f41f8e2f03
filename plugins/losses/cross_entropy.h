// CrossEntropy: the "cross_entropy" and "chunked_cross_entropy" losses, plus z-loss when configured.
#pragma once

#include <cstdint>
#include <memory>

#include "kforge/sdk/registrar.h"

namespace kforge::builtin::losses {

struct CrossEntropyOptions {
  int64_t chunk_tokens = 0;  ///< tokens per chunk; <= 0 computes all tokens at once
  double z_loss_weight = 0;  ///< > 0 adds z_loss(logits, weight)
  /// Tensor parallelism: logits are this rank's vocabulary columns (vocab_parallel_cross_entropy.h); null: whole rows.
  const sdk::TensorParallel* tensor_parallel = nullptr;
};

/// Mean cross-entropy over tokens whose label is not kIgnoreIndex (exactly 0, zero gradient, when
/// none is), plus the z-loss. Chunking changes memory use, not the value or gradient. Under tensor parallelism
/// the same of the vocabulary-split logits, the same on every rank.
class CrossEntropy final : public sdk::Loss {
 public:
  explicit CrossEntropy(const CrossEntropyOptions& options) : options_(options) {}
  /// logits [batch, seq, vocab] (or [tokens, vocab]), labels [batch, seq] (or [tokens]).
  at::Tensor compute(const at::Tensor& logits, const at::Tensor& labels) override;

 private:
  CrossEntropyOptions options_;
};

/// [train] z_loss_weight; unchunked.
std::unique_ptr<sdk::Loss> make_cross_entropy(const sdk::BuildContext& ctx);
/// [train] z_loss_weight and ce_chunk_size (0 -> 4096).
std::unique_ptr<sdk::Loss> make_chunked_cross_entropy(const sdk::BuildContext& ctx);

}  // namespace kforge::builtin::losses
