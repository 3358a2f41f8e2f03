// Ring attention ([distributed] cp > 1): causal GQA attention of this rank's sequence chunks against every rank's,
// the key/value blocks passed around the context-parallel ring and merged by an online softmax.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace kforge::builtin::models {

/// This rank's place in the ring: `pass` sends its tensors to rank (rank + 1) % size and returns the ones rank
/// (rank - 1) % size sent (alike shapes and dtypes), as sdk::ContextParallel::pass_on does.
struct Ring {
  int rank = 0;
  int size = 1;
  std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)> pass;
};

/// softmax(q k^T / sqrt(hd) + mask) v over the whole sequence, of which every rank holds the positions
/// sdk::context_positions(rank, size, S) (S = size * Sl): q (B, H, Sl, hd), k/v (B, KV, Sl, hd) this rank's, H a
/// multiple of KV. A query sees the keys at or before its position, and with `doc_starts` (int64 (B, Sl): the
/// position where each of this rank's queries' document starts, in the whole sequence) none before that. Returns
/// (B, H, Sl, hd) in q's dtype. The key/value blocks go around the ring (size - 1 passes) and every block's scores are
/// merged into running maxima and sums (float32, float64 for float64 inputs); the backward recomputes each block's
/// probabilities from the saved log-sum-exp and sends the key/value gradients around the ring back to their owners
/// (size passes). Only the chunk pairs with a visible key are computed.
at::Tensor ring_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const Ring& ring,
                          const at::Tensor& doc_starts = {});

}  // namespace kforge::builtin::models
