// JointDecoder: the [vlm] arch "joint_decoder" (KempnerForge §10.2): image tokens as a prefix of the text in one causal
// stack.
#pragma once

#include <kforge/sdk/vision_language_model.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kforge::vlm {

/// pixels -> vision_encoder -> adapter -> prefix; the text model's forward_prefixed(prefix, tokens) runs one causal
/// stack over [image | text] with positions from 0 at the first image token and returns the text positions' logits.
class JointDecoder final : public sdk::VisionLanguageModel {
 public:
  /// Registers the parts as the modules vision_encoder, adapter and transformer and routes the text model's block,
  /// module and side-output seams through this model's, so the host's seams see its blocks. Throws
  /// sdk::ConfigError when the image tokens leave the text model no position ([model] max_seq_len).
  explicit JointDecoder(sdk::VisionLanguageParts parts);

  at::Tensor forward(const at::Tensor& tokens) override;
  void set_images(const at::Tensor& pixels) override;
  int64_t visual_tokens() const override { return visual_tokens_; }
  /// The text model's blocks, named and holding parameters under "transformer.".
  std::vector<sdk::ModelBlock> blocks() const override;
  /// The text model's FLOPs over the image and text positions, per text token (the encoder's are not counted).
  double flops_per_token(int64_t seq_len) const override;
  /// The text model's estimate plus the encoder's and adapter's parameter counts.
  int64_t num_params_estimate() const override;
  /// The text model's limit less the image tokens.
  int64_t max_seq_len() const override;
  std::vector<std::pair<std::string, at::Tensor>> auxiliary_losses() override { return text_->auxiliary_losses(); }
  void set_step(int64_t step, int64_t max_steps) override { text_->set_step(step, max_steps); }
  std::vector<std::pair<std::string, double>> step_metrics() override { return text_->step_metrics(); }
  /// The text model's state for `max_len` text positions plus the image's.
  std::unique_ptr<DecodeState> start_decoding(int64_t batch, int64_t max_len) override;
  /// The first call runs the images set by set_images() before its tokens (decode_prefixed); later calls append
  /// tokens only: the logits equal forward()'s over all tokens so far.
  at::Tensor decode(const at::Tensor& tokens, DecodeState& state) override;

 private:
  /// The adapter's image tokens of the images set (sdk::Error when none are, or not one per row of tokens).
  at::Tensor image_tokens(const at::Tensor& tokens) const;

  std::shared_ptr<sdk::VisionEncoder> encoder_;
  std::shared_ptr<sdk::Adapter> adapter_;
  std::shared_ptr<sdk::Model> text_;
  int64_t visual_tokens_ = 0;
  at::Tensor pixels_;
};

}  // namespace kforge::vlm
