// Attention: causal grouped-query self-attention with RoPE and optional per-head QK-norm.
#pragma once

#include <torch/nn/module.h>

#include <memory>

#include "linear.h"
#include "model_config.h"
#include "rms_norm.h"

namespace kforge::models {

/// Parameters: q_proj (H*hd, dim), k_proj / v_proj (KV*hd, dim), o_proj (dim, H*hd) and, with
/// qk_norm, q_norm / k_norm (hd). Query head h reads key/value head h / (H/KV), as
/// repeat_interleave(H/KV) would give, computed as one grouped matmul without copying K/V.
class Attention : public torch::nn::Module {
 public:
  explicit Attention(const ModelConfig& config);
  /// x: (B, S, dim); cos/sin: (S, hd/2) in x's dtype. Returns (B, S, dim).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

 private:
  int64_t n_heads_, n_kv_heads_, head_dim_;
  std::shared_ptr<Linear> q_proj_, k_proj_, v_proj_, o_proj_;
  std::shared_ptr<RMSNorm> q_norm_, k_norm_;  // null without qk_norm
};

/// softmax(q k^T / sqrt(hd) + causal mask) v in fp32 softmax. q: (B, H, S, hd), k/v: (B, KV, S, hd),
/// H a multiple of KV, all contiguous. Returns (B, H, S, hd).
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace kforge::models
