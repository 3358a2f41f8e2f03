// Tiled ("flash-style") causal GQA attention on the CPU: the same result as the explicit
// causal_attention (attention.h) without materialising the S x S scores or their gradient.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "vector_lanes.h"

namespace kforge::builtin::models {

/// Whether the kernel takes q's device and dtype (CPU float32 or bfloat16).
bool flash_attention_supports(const at::Tensor& q);

/// Query rows and key columns per tile (any positive sizes; they need not divide the lengths).
struct FlashTiles {
  int64_t q = 64;
  int64_t k = 64;
};

/// softmax(q k^T / sqrt(hd) + causal mask) v. q: (B, H, Sq, hd) at positions [Sk - Sq, Sk); k/v:
/// (B, KV, Sk, hd) at positions [0, Sk), H a multiple of KV (query head h reads kv head h / (H/KV),
/// addressed in place, never copied per head). Forward walks key tiles with an online softmax and
/// skips tiles above the diagonal; backward (an autograd Function) recomputes each tile from the
/// saved per-row logsumexp. Float32 throughout; bfloat16 inputs are computed in float32 and the
/// output (and input gradients) rounded back to bfloat16. Returns (B, H, Sq, hd) in q's dtype.
/// Packed documents: `doc_starts` (document_starts.h's document_starts, contiguous int64 (B, S), Sq = Sk) also hides
/// from query t the keys before starts[t]; key tiles before the query tile's first document are skipped (and,
/// in backward, query tiles after the key tile's last document), and no S x S mask is built.
/// Throws sdk::Error for inputs flash_attention_supports() refuses or inconsistent shapes.
at::Tensor flash_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, FlashTiles tiles = {},
                           const at::Tensor& doc_starts = {});

/// The row kernels' (softmax exp and gradient) vector width in use: the widest this CPU runs, unless a
/// test chose another.
lanes::Width flash_attention_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_flash_attention_width(lanes::Width width);

}  // namespace kforge::builtin::models
