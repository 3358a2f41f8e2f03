// JointDecoder: the forward over [image | text] and its cached decoding.
#include "joint_decoder.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::vlm {

JointDecoder::JointDecoder(sdk::VisionLanguageParts parts) : TextComposition(std::move(parts), "joint_decoder") {
  visual_tokens_ = adapter_->output_num_tokens(encoder_->num_tokens());
  const int64_t limit = text_->max_seq_len();
  if (limit > 0 && frames_ * visual_tokens_ >= limit) {
    throw sdk::ConfigError("[vlm] arch = \"joint_decoder\": each " +
                           (frames_ == 1 ? std::string("image") : std::to_string(frames_) + "-frame clip") + " takes " +
                           std::to_string(frames_ * visual_tokens_) +
                           " positions of the text model's [model] "
                           "max_seq_len = " +
                           std::to_string(limit) +
                           ", which leaves none for text; raise max_seq_len or pool the image tokens ([adapter])");
  }
}

at::Tensor JointDecoder::forward(const at::Tensor& tokens) {
  const VisualTokens visual = image_tokens(tokens);
  return text_->forward_prefixed(visual.tokens, tokens, visual.padding);
}

namespace {

// The text model's decoding state, and whether the image tokens are in it yet.
struct JointDecodeState final : sdk::Model::DecodeState {
  std::unique_ptr<sdk::Model::DecodeState> text;
  bool has_images = false;
};

}  // namespace

std::unique_ptr<sdk::Model::DecodeState> JointDecoder::start_decoding(int64_t batch, int64_t max_len) {
  auto state = std::make_unique<JointDecodeState>();
  state->text = text_->start_decoding(batch, max_len + frames_ * visual_tokens_);
  return state;
}

at::Tensor JointDecoder::decode(const at::Tensor& tokens, DecodeState& state) {
  auto* joint = dynamic_cast<JointDecodeState*>(&state);
  if (joint == nullptr) throw sdk::Error("joint_decoder: decode was given a state not made by its start_decoding");
  if (joint->has_images) return text_->decode(tokens, *joint->text);
  const VisualTokens visual = image_tokens(tokens);
  if (visual.padding.defined() && visual.padding.any().item<bool>()) {
    throw sdk::Error("joint_decoder: cached decoding of clips with padded frames is not supported; give whole clips");
  }
  at::Tensor logits = text_->decode_prefixed(visual.tokens, tokens, *joint->text);
  joint->has_images = true;
  return logits;
}

double JointDecoder::flops_per_token(int64_t seq_len) const {
  const int64_t positions = seq_len + frames_ * visual_tokens_;
  return text_->flops_per_token(positions) * static_cast<double>(positions) / static_cast<double>(seq_len);
}

int64_t JointDecoder::num_params_estimate() const { return text_->num_params_estimate() + vision_parameters(); }

int64_t JointDecoder::max_seq_len() const {
  const int64_t limit = text_->max_seq_len();
  return limit > 0 ? limit - frames_ * visual_tokens_ : 0;
}

}  // namespace kforge::vlm
