// TextComposition: what the strategies that keep the configured text model share: the parts as modules, the text
// model's seams routed through the strategy's, the images of the next forward, and the text model's blocks.
#pragma once

#include <kforge/sdk/vision_language_model.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kforge::vlm {

class TextComposition : public sdk::VisionLanguageModel {
 public:
  void set_images(const at::Tensor& pixels) override;
  /// The text model's blocks, named and holding parameters under "transformer.".
  std::vector<sdk::ModelBlock> blocks() const override;
  std::vector<std::pair<std::string, at::Tensor>> auxiliary_losses() override { return text_->auxiliary_losses(); }
  void set_step(int64_t step, int64_t max_steps) override { text_->set_step(step, max_steps); }
  std::vector<std::pair<std::string, double>> step_metrics() override { return text_->step_metrics(); }

 protected:
  /// Registers the parts as the modules vision_encoder, adapter and transformer and routes the text model's block,
  /// module and side-output seams through this model's, so the host's seams see its blocks. `arch` names the strategy
  /// in errors.
  TextComposition(sdk::VisionLanguageParts parts, std::string arch);
  /// The adapter's image tokens [batch, visual_tokens(), dim] of the images set (sdk::Error when none are, or not one
  /// per row of tokens).
  at::Tensor image_tokens(const at::Tensor& tokens) const;
  /// The parameters of the encoder and the adapter.
  int64_t vision_parameters() const;

  const std::string arch_;
  std::shared_ptr<sdk::VisionEncoder> encoder_;
  std::shared_ptr<sdk::Adapter> adapter_;
  std::shared_ptr<sdk::Model> text_;

 private:
  at::Tensor pixels_;
};

}  // namespace kforge::vlm
