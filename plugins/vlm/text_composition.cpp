// TextComposition: the parts, the routed seams, the images and the text model's blocks under "transformer.".
#include "text_composition.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::vlm {

TextComposition::TextComposition(sdk::VisionLanguageParts parts, std::string arch)
    : arch_(std::move(arch)),
      encoder_(std::move(parts.encoder)),
      adapter_(std::move(parts.adapter)),
      text_(std::move(parts.text)) {
  if (!encoder_ || !adapter_ || !text_) {
    throw sdk::Error(arch_ + ": a vision encoder, an adapter and a text model are all required");
  }
  register_module("vision_encoder", encoder_);
  register_module("adapter", adapter_);
  register_module("transformer", text_);
  text_->set_block_runner(
      [this](size_t index, const at::Tensor& input, const BlockFn& block) { return run_block(index, input, block); });
  text_->set_module_runner([this](size_t block, const std::string& module, const at::Tensor& input, const BlockFn& fn) {
    return run_module(block, module, input, fn);
  });
  text_->set_side_output_sink([this](const at::Tensor& value) { block_side_output(value); });
}

void TextComposition::set_images(const at::Tensor& pixels) {
  if (pixels.defined() && (pixels.dim() != 4 || !pixels.is_floating_point())) {
    throw sdk::Error(arch_ + ": images must be a floating tensor [batch, channels, height, width], got " +
                     std::string(c10::toString(pixels.scalar_type())) + " " + c10::str(pixels.sizes()));
  }
  pixels_ = pixels;
}

at::Tensor TextComposition::image_tokens(const at::Tensor& tokens) const {
  if (!pixels_.defined()) throw sdk::Error(arch_ + ": no images were set for this forward (set_images)");
  if (tokens.dim() != 2 || tokens.size(0) != pixels_.size(0)) {
    throw sdk::Error(arch_ + ": " + std::to_string(pixels_.size(0)) + " images for tokens " + c10::str(tokens.sizes()) +
                     " (one image per row)");
  }
  // A frozen tower (no parameter requiring a gradient) records no graph: autograd sees nothing to differentiate.
  return adapter_->forward(encoder_->forward(pixels_));
}

std::vector<sdk::ModelBlock> TextComposition::blocks() const {
  std::vector<sdk::ModelBlock> out = text_->blocks();
  for (sdk::ModelBlock& b : out) {
    b.name = "transformer." + b.name;
    for (std::string& p : b.params) p = "transformer." + p;
  }
  return out;
}

int64_t TextComposition::vision_parameters() const {
  int64_t n = 0;
  for (const at::Tensor& p : encoder_->parameters()) n += p.numel();
  for (const at::Tensor& p : adapter_->parameters()) n += p.numel();
  return n;
}

}  // namespace kforge::vlm
