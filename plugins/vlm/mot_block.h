// MoTBlock: one Mixture-of-Transformers layer (Liang et al. 2024, Alg. 1): each modality's own norms, Q/K/V/O
// projections and FFN around one global causal attention over [image | text].
#pragma once

#include <torch/nn/module.h>

#include <array>
#include <memory>

#include "own_stack.h"
#include "transformer/linear.h"
#include "transformer/mlp.h"
#include "transformer/model_config.h"
#include "transformer/norm.h"
#include "transformer/rms_norm.h"
#include "transformer/transformer_block.h"

namespace kforge::vlm {

/// RoPE tables of each modality's positions, counted from 0 in its own stream: cos/sin [positions, head_dim / 2], or
/// (B, 1, positions, head_dim / 2) per row (a padded clip's image positions, counted from 0 at its first real one),
/// indexed as kModalities.
struct ModalityRope {
  std::array<at::Tensor, 2> cos, sin;
};

/// q_proj.{m}, k_proj.{m}, v_proj.{m}, o_proj.{m} (and with [model] qk_norm q_norm.{m}, k_norm.{m}) for m in
/// kModalities: each modality's positions are projected by its weights and rotated by its positions, then one causal
/// GQA attention runs over all of them ([model] sdpa_backend picks the kernel, as in the transformer's Attention),
/// within each position's document when the image positions hold padding.
class MoTAttention : public torch::nn::Module {
 public:
  explicit MoTAttention(const builtin::models::ModelConfig& config);
  /// x: normed [B, P + S, dim], its first `image_positions` the image's -> [B, P + S, dim], each modality's positions
  /// through its o_proj. doc_starts (OwnStack::run_layers'; undefined: none) keeps each query to its document.
  at::Tensor forward(const at::Tensor& x, int64_t image_positions, const ModalityRope& rope,
                     const at::Tensor& doc_starts) const;
  /// Zeroes every modality's o_proj weight.
  void zero_output() const;

 private:
  int64_t n_heads_, n_kv_heads_, head_dim_;
  std::string backend_;  ///< [model] sdpa_backend
  bool fused_;           ///< [model] fused_kernels
  PerModality<builtin::models::Linear> q_proj_, k_proj_, v_proj_, o_proj_;
  PerModality<builtin::models::RMSNorm> q_norm_, k_norm_;  // nulls without qk_norm
};

/// x += attention(attention_norm.{m}(x_m)); x_m += mlp.{m}(mlp_norm.{m}(x_m)): KempnerForge's MoTBlock under the
/// transformer's module names (attention_norm, attention, mlp_norm, mlp), each holding one module per modality.
class MoTBlock : public torch::nn::Module {
 public:
  explicit MoTBlock(const builtin::models::ModelConfig& config);
  /// x [B, P + S, dim], its first `image_positions` the image's -> [B, P + S, dim]; doc_starts as MoTAttention's. The
  /// attention runs through `attention_seam` (which may call it again in the backward: it holds what it reads by
  /// value).
  at::Tensor forward(const at::Tensor& x, int64_t image_positions, const ModalityRope& rope,
                     const at::Tensor& doc_starts, const builtin::models::AttentionSeam& attention_seam) const;
  /// Zeroes every modality's o_proj and mlp down_proj weights: the block is then the identity.
  void zero_residual_outputs() const;

 private:
  PerModality<builtin::models::Norm> attention_norm_, mlp_norm_;
  std::shared_ptr<MoTAttention> attention_;
  PerModality<builtin::models::MLP> mlp_;
};

}  // namespace kforge::vlm
