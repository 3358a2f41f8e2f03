// JointDecoder: composition, the forward over [image | text], and the text model's blocks under "transformer.".
#include "joint_decoder.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::vlm {
namespace {

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const at::Tensor& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace

JointDecoder::JointDecoder(sdk::VisionLanguageParts parts)
    : encoder_(std::move(parts.encoder)), adapter_(std::move(parts.adapter)), text_(std::move(parts.text)) {
  if (!encoder_ || !adapter_ || !text_) {
    throw sdk::Error("joint_decoder: a vision encoder, an adapter and a text model are all required");
  }
  visual_tokens_ = adapter_->output_num_tokens(encoder_->num_tokens());
  const int64_t limit = text_->max_seq_len();
  if (limit > 0 && visual_tokens_ >= limit) {
    throw sdk::ConfigError("[vlm] arch = \"joint_decoder\": each image takes " + std::to_string(visual_tokens_) +
                           " positions of the text model's [model] max_seq_len = " + std::to_string(limit) +
                           ", which leaves none for text; raise max_seq_len or pool the image tokens ([adapter])");
  }
  register_module("vision_encoder", encoder_);
  register_module("adapter", adapter_);
  register_module("transformer", text_);
  text_->set_block_runner(
      [this](size_t index, const at::Tensor& input, const BlockFn& block) { return run_block(index, input, block); });
  text_->set_module_runner([this](size_t block, const std::string& module, const at::Tensor& input,
                                  const BlockFn& fn) { return run_module(block, module, input, fn); });
  text_->set_side_output_sink([this](const at::Tensor& value) { block_side_output(value); });
}

void JointDecoder::set_images(const at::Tensor& pixels) {
  if (pixels.defined() && (pixels.dim() != 4 || !pixels.is_floating_point())) {
    throw sdk::Error("joint_decoder: images must be a floating tensor [batch, channels, height, width], got " +
                     std::string(c10::toString(pixels.scalar_type())) + " " + c10::str(pixels.sizes()));
  }
  pixels_ = pixels;
}

at::Tensor JointDecoder::image_tokens(const at::Tensor& tokens) const {
  if (!pixels_.defined()) throw sdk::Error("joint_decoder: no images were set for this forward (set_images)");
  if (tokens.dim() != 2 || tokens.size(0) != pixels_.size(0)) {
    throw sdk::Error("joint_decoder: " + std::to_string(pixels_.size(0)) + " images for tokens " +
                     c10::str(tokens.sizes()) + " (one image per row)");
  }
  // A frozen tower (no parameter requiring a gradient) records no graph: autograd sees nothing to differentiate.
  return adapter_->forward(encoder_->forward(pixels_));
}

at::Tensor JointDecoder::forward(const at::Tensor& tokens) {
  return text_->forward_prefixed(image_tokens(tokens), tokens);
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
  state->text = text_->start_decoding(batch, max_len + visual_tokens_);
  return state;
}

at::Tensor JointDecoder::decode(const at::Tensor& tokens, DecodeState& state) {
  auto* joint = dynamic_cast<JointDecodeState*>(&state);
  if (joint == nullptr) throw sdk::Error("joint_decoder: decode was given a state not made by its start_decoding");
  if (joint->has_images) return text_->decode(tokens, *joint->text);
  at::Tensor logits = text_->decode_prefixed(image_tokens(tokens), tokens, *joint->text);
  joint->has_images = true;
  return logits;
}

std::vector<sdk::ModelBlock> JointDecoder::blocks() const {
  std::vector<sdk::ModelBlock> out = text_->blocks();
  for (sdk::ModelBlock& b : out) {
    b.name = "transformer." + b.name;
    for (std::string& p : b.params) p = "transformer." + p;
  }
  return out;
}

double JointDecoder::flops_per_token(int64_t seq_len) const {
  const int64_t positions = seq_len + visual_tokens_;
  return text_->flops_per_token(positions) * static_cast<double>(positions) / static_cast<double>(seq_len);
}

int64_t JointDecoder::num_params_estimate() const {
  return text_->num_params_estimate() + parameter_count(*encoder_) + parameter_count(*adapter_);
}

int64_t JointDecoder::max_seq_len() const {
  const int64_t limit = text_->max_seq_len();
  return limit > 0 ? limit - visual_tokens_ : 0;
}

}  // namespace kforge::vlm
