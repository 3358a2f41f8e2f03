// Attention: causal grouped-query self-attention with RoPE and optional per-head QK-norm.
#pragma once

#include <kforge/sdk/tensor_parallel.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "block_capture.h"
#include "kv_cache.h"
#include "linear.h"
#include "model_config.h"
#include "ring_attention.h"
#include "rms_norm.h"
#include "tensor_split.h"

namespace kforge::builtin::models {

/// Parameters: q_proj (H*hd, dim), k_proj / v_proj (KV*hd, dim), o_proj (dim, H*hd) and, with
/// qk_norm, q_norm / k_norm (hd). Query head h reads key/value head h / (H/KV), as
/// repeat_interleave(H/KV) would give, computed without copying K/V.
/// [model] sdpa_backend picks the kernel (use_tiled_attention below): the tiled flash_attention
/// (flash_attention.h) or the explicit causal_attention.
class Attention : public torch::nn::Module {
 public:
  explicit Attention(const ModelConfig& config);
  /// x: (B, S, dim); cos/sin: (S, hd/2) in x's dtype, for x's positions. Returns (B, S, dim).
  /// With a cache, x holds positions [fill, fill + S): its K/V are appended to `layer`'s cache and
  /// the queries attend to every cached position up to their own. With a `capture` that wants
  /// BlockPoint::attention, also delivers attention_probabilities of the rotated q and k. Packed documents
  /// (no cache): `doc_starts` (document_starts.h) keeps each query to its own document, in every kernel.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, KVCache* cache = nullptr,
                     size_t layer = 0, const BlockCapture* capture = nullptr, const at::Tensor& doc_starts = {});
  /// Tensor parallelism: keeps this rank's heads (q/k/v rows, o columns; `split.tp` divides both head counts); from
  /// then on its input and output pass through `split`. Returns the slices' placements, named relative to this module.
  std::vector<sdk::TensorShard> split(const TensorSplit& split);
  /// Context parallelism: x holds this rank's positions of the sequence (sdk::context_positions), cos/sin and
  /// doc_starts are theirs (doc_starts in the whole sequence's positions), and attention is ring_attention over
  /// `ring`, which must outlive the module's last backward. No cache nor capture then.
  void attend_over(const Ring* ring) { ring_ = ring; }

 private:
  int64_t n_heads_, n_kv_heads_, head_dim_;  ///< heads this rank computes (all but under tensor parallelism)
  std::string backend_;  ///< [model] sdpa_backend
  bool fused_;           ///< [model] fused_kernels
  std::shared_ptr<Linear> q_proj_, k_proj_, v_proj_, o_proj_;
  std::shared_ptr<RMSNorm> q_norm_, k_norm_;  // null without qk_norm
  TensorSplit split_;                         ///< set by split()
  const Ring* ring_ = nullptr;                ///< set by attend_over()
};

/// softmax(q k^T / sqrt(hd) + causal mask) v, the softmax computed in float. q: (B, H, Sq, hd) at positions
/// [Sk - Sq, Sk), k/v: (B, KV, Sk, hd) at positions [0, Sk); H a multiple of KV, q contiguous.
/// Query i sees keys up to Sk - Sq + i. Returns (B, H, Sq, hd).
/// Computed in blocks of kQueryBlock queries, each against only the keys it can see; `fused` takes
/// the fused causal_softmax, else mask + softmax. Packed documents: `doc_starts` (document_starts.h, int64 (B, S),
/// Sq = Sk) also hides the keys before each query's document start; a block skips the keys before the
/// earliest start of its first query over the batch.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool fused = true,
                            const at::Tensor& doc_starts = {});

/// The attention probabilities behind causal_attention, by the math path: softmax(q k^T / sqrt(hd)
/// + causal mask) in float32 (q, k and the mask as there; query head h reads key head h / (H/KV)).
/// Returns (B, H, Sq, Sk); each row sums to 1 and is 0 past the query's position (and, with `doc_starts`,
/// before its document's start). For capture only.
at::Tensor attention_probabilities(const at::Tensor& q, const at::Tensor& k, const at::Tensor& doc_starts = {});

/// Queries per block of causal_attention.
inline constexpr int64_t kQueryBlock = 128;

/// Longest key sequence for which "auto" runs bf16 attention explicitly (on a CPU with bf16 instructions).
inline constexpr int64_t kAutoMathMaxKeys = 1024;

/// Whether `backend` runs q (against `keys` keys) through the tiled kernel: never for "math" or
/// inputs it does not support (e.g. float64); always for "flash"; for "auto" (and efficient/cudnn,
/// CUDA names) in float32, and in bfloat16 beyond kAutoMathMaxKeys keys or on a CPU without bf16 instructions.
bool use_tiled_attention(const std::string& backend, const at::Tensor& q, int64_t keys);

}  // namespace kforge::builtin::models
