// RoPE: rotary position embedding tables (rotate-half layout, fp32) and their application.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

namespace kforge::builtin::models {

/// cos/sin tables of shape (max_seq_len, head_dim / 2) in fp32, angle[p, i] = p * theta^(-2i/hd).
/// Plain tensors, not parameters or buffers: they stay fp32 and out of checkpoints.
class RopeTables {
 public:
  RopeTables(int64_t head_dim, int64_t max_seq_len, double theta);

  /// Tables for positions [0, seq_len), on `like`'s device and in its dtype (cached per device/dtype).
  /// Throws sdk::ConfigError when seq_len exceeds max_seq_len.
  std::pair<at::Tensor, at::Tensor> slice(int64_t seq_len, const at::Tensor& like);
  /// Tables for per-row positions (packed documents restart at 0): positions int64 [B, S] -> cos/sin
  /// (B, 1, S, head_dim / 2), which apply_rope broadcasts over the heads. The positions are below `span` (0: S, a row's
  /// length; a context-parallel rank's reach the whole sequence's). Throws as slice() beyond max_seq_len.
  std::pair<at::Tensor, at::Tensor> gather(const at::Tensor& positions, const at::Tensor& like, int64_t span = 0);

  const at::Tensor& cos() const { return cos_; }
  const at::Tensor& sin() const { return sin_; }

 private:
  at::Tensor cos_, sin_;          // fp32, CPU, (max_seq_len, hd/2)
  at::Tensor cached_cos_, cached_sin_;  // cos_/sin_ converted to the last requested device/dtype
};

/// Rotates x (..., seq, head_dim) in rotate-half layout: the pair (i, i + hd/2) turns by angle[pos, i].
/// cos/sin: (seq, head_dim / 2), or (B, 1, seq, head_dim / 2) per row, in x's dtype. Returns a new contiguous tensor.
/// `fused` ([model] fused_kernels) takes the one-pass kernel where it applies (rope_kernel.h), else the composite ops.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool fused = true);

}  // namespace kforge::builtin::models
