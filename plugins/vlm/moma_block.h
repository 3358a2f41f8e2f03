// MoMaBlock: one Mixture of Modality-Aware Experts layer (Lin et al. 2024): the transformer's shared pre-norm
// attention, then a pre-norm FFN routed by modality (by position) and, within each modality, to its experts by expert
// choice.
#pragma once

#include <torch/nn/module.h>

#include <array>
#include <memory>

#include "expert_choice_ffn.h"
#include "own_stack.h"
#include "transformer/attention.h"
#include "transformer/model_config.h"
#include "transformer/norm.h"
#include "transformer/transformer_block.h"

namespace kforge::vlm {

/// attention_norm, attention (the transformer's Attention: q/k/v/o_proj), mlp_norm and mlp.{m} (an ExpertChoiceFFN per
/// modality): x += attention(attention_norm(x)); x += mlp(mlp_norm(x)), where mlp routes the image positions of the
/// whole batch to mlp.image (a padded clip's real ones only: padding's output is 0) and the text positions to
/// mlp.text.
class MoMaBlock : public torch::nn::Module {
 public:
  /// experts and capacity_factor (resolved, in (0, 1]) per modality, indexed as kModalities.
  MoMaBlock(const builtin::models::ModelConfig& config, const std::array<int64_t, 2>& experts,
            const std::array<double, 2>& capacity_factor, bool gumbel_noise);
  /// x [B, P + S, dim], its first `image_positions` the image's; cos/sin: RoPE tables of the P + S positions (or per
  /// row); doc_starts: OwnStack::run_layers' (undefined: no padding), which the attention keeps each query within and
  /// which tells the padded image positions. The attention runs through `attention_seam` (which may call it again in
  /// the backward: it holds what it reads by value).
  at::Tensor forward(const at::Tensor& x, int64_t image_positions, const at::Tensor& cos, const at::Tensor& sin,
                     const at::Tensor& doc_starts, const builtin::models::AttentionSeam& attention_seam) const;
  /// Each modality's expert group.
  const PerModality<ExpertChoiceFFN>& mlp() const { return mlp_; }

 private:
  std::shared_ptr<builtin::models::Norm> attention_norm_, mlp_norm_;
  std::shared_ptr<builtin::models::Attention> attention_;
  PerModality<ExpertChoiceFFN> mlp_;
};

}  // namespace kforge::vlm
