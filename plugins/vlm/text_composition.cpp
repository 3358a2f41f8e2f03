// TextComposition: the parts, the routed seams, the images and the text model's blocks and shards under "transformer.".
#include "text_composition.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::vlm {

TextComposition::TextComposition(sdk::VisionLanguageParts parts, std::string arch)
    : arch_(std::move(arch)),
      encoder_(std::move(parts.encoder)),
      adapter_(std::move(parts.adapter)),
      text_(std::move(parts.text)),
      frames_(parts.frames),
      time_embedding_(std::move(parts.time_embedding)) {
  if (frames_ < 1) throw sdk::Error(arch_ + ": parts.frames = " + std::to_string(frames_) + " must be >= 1");
  if (!encoder_ || !adapter_ || !text_) {
    throw sdk::Error(arch_ + ": a vision encoder, an adapter and a text model are all required");
  }
  register_module("vision_encoder", encoder_);
  register_module("adapter", adapter_);
  register_module("transformer", text_);
  if (time_embedding_) {
    if (frames_ == 1) throw sdk::Error(arch_ + ": a time embedding needs clips (parts.frames > 1)");
    register_module("time_embedding", time_embedding_);
  }
  text_->set_block_runner(
      [this](size_t index, const at::Tensor& input, const BlockFn& block) { return run_block(index, input, block); });
  text_->set_module_runner([this](size_t block, const std::string& module, const at::Tensor& input, const BlockFn& fn) {
    return run_module(block, module, input, fn);
  });
  text_->set_side_output_sink([this](const at::Tensor& value) { block_side_output(value); });
}

void TextComposition::set_images(const at::Tensor& pixels, const at::Tensor& frame_mask,
                                 const at::Tensor& frame_times) {
  const int64_t dims = frames_ == 1 ? 4 : 5;
  if (pixels.defined() &&
      (pixels.dim() != dims || !pixels.is_floating_point() || (dims == 5 && pixels.size(1) != frames_))) {
    throw sdk::Error(arch_ + ": " +
                     (frames_ == 1 ? std::string("images must be a floating tensor [batch, channels, height, width]")
                                   : "clips must be a floating tensor [batch, " + std::to_string(frames_) +
                                         " frames, channels, height, width]") +
                     ", got " + std::string(c10::toString(pixels.scalar_type())) + " " + c10::str(pixels.sizes()));
  }
  at::Tensor real;
  if (frame_mask.defined()) {
    if (!pixels.defined() || dims != 5 || frame_mask.scalar_type() != at::kBool ||
        frame_mask.sizes() != pixels.sizes().slice(0, 2)) {
      throw sdk::Error(arch_ + ": a frame mask must be bool [batch, frames] beside clips, got " +
                       std::string(c10::toString(frame_mask.scalar_type())) + " " + c10::str(frame_mask.sizes()));
    }
    real = frame_mask.sum(1);  // int64 [batch]
    const at::Tensor first = at::arange(frames_, real.options()).unsqueeze(0).lt(real.unsqueeze(1));
    if (!first.equal(frame_mask)) {
      throw sdk::Error(arch_ + ": each row of the frame mask must have its real frames first, then its padding");
    }
  }
  if (frame_times.defined() && (!pixels.defined() || dims != 5 || !frame_times.is_floating_point() ||
                                frame_times.sizes() != pixels.sizes().slice(0, 2))) {
    throw sdk::Error(arch_ + ": frame times must be a floating tensor [batch, frames] beside clips, got " +
                     std::string(c10::toString(frame_times.scalar_type())) + " " + c10::str(frame_times.sizes()));
  }
  pixels_ = pixels;
  real_frames_ = real;
  frame_times_ = frame_times;
}

VisualTokens TextComposition::image_tokens(const at::Tensor& tokens) const {
  if (!pixels_.defined()) throw sdk::Error(arch_ + ": no images were set for this forward (set_images)");
  const int64_t batch = pixels_.size(0);
  if (tokens.dim() != 2 || tokens.size(0) != batch) {
    const std::string what = frames_ == 1 ? "image" : "clip";
    throw sdk::Error(arch_ + ": " + std::to_string(batch) + " " + what + "s for tokens " + c10::str(tokens.sizes()) +
                     " (one " + what + " per row)");
  }
  // A frozen tower (no parameter requiring a gradient) records no graph: autograd sees nothing to differentiate.
  at::Tensor out = adapter_->forward(encoder_->forward(frames_ == 1 ? pixels_ : pixels_.flatten(0, 1)));
  if (frames_ == 1) return {out, at::Tensor()};
  out = out.view({batch, frames_, out.size(1), out.size(2)});  // [batch, frames, per frame, dim]
  if (time_embedding_) {
    const at::Tensor times = frame_times_.defined() ? frame_times_ : at::zeros({batch, frames_}, at::kFloat);
    out = out + time_embedding_->forward(times.to(out.device(), at::kFloat)).to(out.scalar_type()).unsqueeze(2);
  }
  at::Tensor padding;
  if (real_frames_.defined()) {
    // Row b's frames as [its padding, its real frames]: frame (j + real_b) mod frames at place j.
    const at::Tensor order =
        (at::arange(frames_, real_frames_.options()).unsqueeze(0) + real_frames_.unsqueeze(1)).remainder(frames_);
    out = out.gather(1, order.view({batch, frames_, 1, 1}).expand_as(out));
    padding = (frames_ - real_frames_) * out.size(2);
  }
  return {out.flatten(1, 2), padding};
}

std::vector<sdk::ModelBlock> TextComposition::blocks() const {
  std::vector<sdk::ModelBlock> out = text_->blocks();
  for (sdk::ModelBlock& b : out) {
    b.name = "transformer." + b.name;
    for (std::string& p : b.params) p = "transformer." + p;
  }
  return out;
}

std::vector<sdk::TensorShard> TextComposition::tensor_shards() const {
  std::vector<sdk::TensorShard> out = text_->tensor_shards();
  for (sdk::TensorShard& shard : out) shard.name = "transformer." + shard.name;
  return out;
}

std::vector<sdk::ExpertShard> TextComposition::expert_shards() const {
  std::vector<sdk::ExpertShard> out = text_->expert_shards();
  for (sdk::ExpertShard& shard : out) shard.name = "transformer." + shard.name;
  return out;
}

int64_t TextComposition::vision_parameters() const {
  int64_t n = 0;
  for (const at::Tensor& p : encoder_->parameters()) n += p.numel();
  for (const at::Tensor& p : adapter_->parameters()) n += p.numel();
  return n;
}

}  // namespace kforge::vlm
