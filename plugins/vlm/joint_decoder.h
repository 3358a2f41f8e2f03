// JointDecoder: the [vlm] arch "joint_decoder" (KempnerForge §10.2): image tokens as a prefix of the text in one causal
// stack.
#pragma once

#include <memory>

#include "text_composition.h"

namespace kforge::vlm {

/// pixels -> vision_encoder -> adapter -> prefix; the text model's forward_prefixed(prefix, tokens) runs one causal
/// stack over [image | text] with positions from 0 at the first image token and returns the text positions' logits.
class JointDecoder final : public TextComposition {
 public:
  /// Throws sdk::ConfigError when the image tokens leave the text model no position ([model] max_seq_len).
  explicit JointDecoder(sdk::VisionLanguageParts parts);

  at::Tensor forward(const at::Tensor& tokens) override;
  int64_t visual_tokens() const override { return visual_tokens_; }
  /// The text model's FLOPs over the image and text positions, per text token (the encoder's are not counted).
  double flops_per_token(int64_t seq_len) const override;
  /// The text model's estimate plus the encoder's and adapter's parameter counts.
  int64_t num_params_estimate() const override;
  /// The text model's limit less the image tokens.
  int64_t max_seq_len() const override;
  /// The text model's state for `max_len` text positions plus the image's.
  std::unique_ptr<DecodeState> start_decoding(int64_t batch, int64_t max_len) override;
  /// The first call runs the images set by set_images() before its tokens (decode_prefixed); later calls append
  /// tokens only: the logits equal forward()'s over all tokens so far.
  at::Tensor decode(const at::Tensor& tokens, DecodeState& state) override;

 private:
  int64_t visual_tokens_ = 0;
};

}  // namespace kforge::vlm
