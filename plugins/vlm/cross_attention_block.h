// CrossAttentionBlock: one of the cross_attention strategy's blocks: text queries attend to the image tokens, then an
// MLP, each pre-norm with a residual (KempnerForge §10.2, Llama-3-V style).
#pragma once

#include <torch/nn/module.h>

#include <memory>

#include "transformer/linear.h"
#include "transformer/mlp.h"
#include "transformer/model_config.h"
#include "transformer/norm.h"

namespace kforge::vlm {

/// Parameters: attention_norm, attention.{q,k,v,o}_proj, mlp_norm, mlp (the text model's norm type, eps, activation,
/// FFN width and linear backend). q_proj reads the normed text, k_proj / v_proj the image tokens as they come. Query
/// head h reads key/value head h / (n_heads / n_kv_heads). No RoPE and no causal mask: every text position sees every
/// image token but padding. o_proj and the MLP's down_proj start at zero, so a new block is the identity.
class CrossAttentionBlock : public torch::nn::Module {
 public:
  CrossAttentionBlock(const builtin::models::ModelConfig& text, int64_t n_heads, int64_t n_kv_heads);
  /// text: (B, S, dim); image: (B, P, dim) -> (B, S, dim). padding, int64 (B) (undefined: none): the first
  /// padding[b] image tokens of row b are padding, never attended to; a row whose tokens are all padding attends to
  /// nothing (its attention output is zero, never NaN).
  at::Tensor forward(const at::Tensor& text, const at::Tensor& image, const at::Tensor& padding = {});
  /// The image tokens' keys and values, (B, n_kv_heads, P, head_dim) each: what forward() computes of the image,
  /// for a decoder that keeps them between steps.
  std::pair<at::Tensor, at::Tensor> image_keys_values(const at::Tensor& image);
  /// forward() with the image's keys and values given.
  at::Tensor forward_with(const at::Tensor& text, const at::Tensor& keys, const at::Tensor& values,
                          const at::Tensor& padding = {});

 private:
  int64_t n_heads_, n_kv_heads_, head_dim_;
  std::shared_ptr<builtin::models::Norm> attention_norm_, mlp_norm_;
  std::shared_ptr<builtin::models::Linear> q_proj_, k_proj_, v_proj_, o_proj_;
  std::shared_ptr<builtin::models::MLP> mlp_;
};

}  // namespace kforge::vlm
