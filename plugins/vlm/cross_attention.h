// CrossAttention: the [vlm] arch "cross_attention" (KempnerForge §10.2, Llama-3-V style): a text-only residual stream,
// with cross-attention blocks over the image tokens after every n-th text block.
#pragma once

#include <kforge/sdk/registrar.h>

#include <memory>
#include <utility>
#include <vector>

#include "cross_attention_block.h"
#include "text_composition.h"

namespace kforge::vlm {

/// What [vlm] sets of the cross-attention blocks, resolved: heads 0 are the model's, key/value heads 0 the block's.
struct CrossAttentionSettings {
  int64_t every_n_layers = 4;  ///< a block after text block i iff (i + 1) % every_n_layers == 0
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
};

/// pixels -> vision_encoder -> adapter -> image tokens; the tokens run through the text model, and after text block i
/// with (i + 1) % every_n_layers == 0 the block's output goes through transformer.cross_attention_layers.{j}
/// (registered in the text model, so the names are KempnerForge's), j = (i + 1) / every_n_layers - 1. The
/// cross-attention blocks are not blocks() of their own: FSDP keeps them with the root's parameters, and activation
/// checkpointing, which recomputes text blocks only, never re-runs them (KempnerForge never checkpoints them either).
class CrossAttention final : public TextComposition {
 public:
  /// Throws sdk::ConfigError, naming the keys, when every_n_layers leaves no block or the heads do not divide.
  CrossAttention(sdk::VisionLanguageParts parts, const builtin::models::ModelConfig& text,
                 const CrossAttentionSettings& settings);

  at::Tensor forward(const at::Tensor& tokens) override;
  int64_t visual_tokens() const override { return visual_tokens_; }
  /// The text model's FLOPs plus the cross-attention blocks' (their image keys and values spread over the text).
  double flops_per_token(int64_t seq_len) const override;
  int64_t num_params_estimate() const override;
  /// The text model's: the image tokens take no position.
  int64_t max_seq_len() const override { return text_->max_seq_len(); }
  std::unique_ptr<DecodeState> start_decoding(int64_t batch, int64_t max_len) override;
  /// The first call computes each block's image keys and values from the images set by set_images() and keeps them;
  /// every call appends tokens to the text model's cache: the logits equal forward()'s over all tokens so far.
  at::Tensor decode(const at::Tensor& tokens, DecodeState& state) override;

 private:
  /// Block j of the cross-attention layers on `text`: over image_, or over the decoding keys and values.
  at::Tensor cross(size_t j, const at::Tensor& text) const;

  int64_t every_n_layers_;
  int64_t visual_tokens_;
  std::vector<std::shared_ptr<CrossAttentionBlock>> layers_;
  VisualTokens image_;                                                           ///< the running forward's image tokens
  const std::vector<std::pair<at::Tensor, at::Tensor>>* keys_values_ = nullptr;  ///< the running decode's
};

/// The factory the plugin registers: the [vlm] keys and the [model] settings the blocks are sized by.
std::shared_ptr<sdk::VisionLanguageModel> make_cross_attention(const sdk::BuildContext& ctx,
                                                               sdk::VisionLanguageParts parts);

}  // namespace kforge::vlm
