// TextComposition: what the strategies that keep the configured text model share: the parts as modules, the text
// model's seams routed through the strategy's, the images of the next forward, and the text model's blocks.
#pragma once

#include <kforge/sdk/vision_language_model.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kforge::vlm {

/// A row's visual tokens: [batch, positions, dim], and how many of each row's first positions are padding (int64
/// [batch]; undefined when none is).
struct VisualTokens {
  at::Tensor tokens;
  at::Tensor padding;
};

class TextComposition : public sdk::VisionLanguageModel {
 public:
  /// Checks the shapes (images [batch, 3, H, W], or clips [batch, frames, 3, H, W] with parts.frames frames and a
  /// frame_mask [batch, frames] of real frames first, and frame_times [batch, frames]) and keeps them for the next
  /// forward.
  void set_images(const at::Tensor& pixels, const at::Tensor& frame_mask = {},
                  const at::Tensor& frame_times = {}) override;
  /// The text model's blocks, named and holding parameters under "transformer.".
  std::vector<sdk::ModelBlock> blocks() const override;
  /// The text model's split parameters (tensor parallelism) and expert shares (expert parallelism), under
  /// "transformer."; the encoder's, the adapter's and the strategy's own parameters are whole on every rank.
  std::vector<sdk::TensorShard> tensor_shards() const override;
  std::vector<sdk::ExpertShard> expert_shards() const override;
  std::vector<std::pair<std::string, at::Tensor>> auxiliary_losses() override { return text_->auxiliary_losses(); }
  void set_step(int64_t step, int64_t max_steps) override { text_->set_step(step, max_steps); }
  std::vector<std::pair<std::string, double>> step_metrics() override { return text_->step_metrics(); }

 protected:
  /// Registers the parts as the modules vision_encoder, adapter, transformer (and time_embedding, when parts has one)
  /// and routes the text model's block, module and side-output seams through this model's, so the host's seams see its
  /// blocks. `arch` names the strategy in errors.
  TextComposition(sdk::VisionLanguageParts parts, std::string arch);
  /// The adapter's tokens of the images set, [batch, frames x visual_tokens(), dim] (sdk::Error when none are, or not
  /// one image or clip per row of tokens): a clip's frames in order, its padded frames moved before its real ones (so
  /// the padding is the first `padding` positions of the row, and the real frames keep the positions an unpadded clip
  /// of as many frames has). With a time embedding, each frame's tokens first get its vector of the frame's time.
  VisualTokens image_tokens(const at::Tensor& tokens) const;
  /// The parameters of the encoder and the adapter.
  int64_t vision_parameters() const;

  const std::string arch_;
  std::shared_ptr<sdk::VisionEncoder> encoder_;
  std::shared_ptr<sdk::Adapter> adapter_;
  std::shared_ptr<sdk::Model> text_;
  const int64_t frames_;  ///< parts.frames: images per row
  std::shared_ptr<sdk::TimeEmbedding> time_embedding_;  ///< parts.time_embedding, or null

 private:
  at::Tensor pixels_;
  at::Tensor real_frames_;  ///< int64 [batch] of clips set with a frame mask, else undefined
  at::Tensor frame_times_;  ///< float [batch, frames] of clips set with times, else undefined
};

}  // namespace kforge::vlm
