// VisionLanguageModel: a modality strategy, selected by [vlm] arch: the model a vision-language run trains, built from
// the configured vision encoder, adapter and text model.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "kforge/sdk/adapter.h"
#include "kforge/sdk/config_view.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/vision_encoder.h"

namespace kforge::sdk {

/// What the host builds a strategy from. The strategy owns them from then on and registers them as its modules
/// "vision_encoder", "adapter" and "transformer", so their parameters are named under those prefixes (KempnerForge's
/// VLMWrapper names, which [vlm] module_patterns and freeze directives match).
struct VisionLanguageParts {
  std::shared_ptr<VisionEncoder> encoder;  ///< [vision_encoder] type
  std::shared_ptr<Adapter> adapter;        ///< [adapter] type, from the encoder's feature_dim() to [model] dim
  std::shared_ptr<Model> text;             ///< [model] model_type
  /// The validated [model] section the text model was built from, set by the host and valid during the factory call
  /// only: what a strategy with layers of its own (cross-attention blocks, per-modality weights) sizes them by.
  const ConfigView* text_config = nullptr;
};

/// forward(tokens) runs the images set by set_images() through the encoder and adapter and the tokens through the text
/// model, and returns logits [batch, S, vocab] of the token positions. blocks() are the text model's under
/// "transformer." (or, for a strategy that builds its own stack, its layers under that prefix).
class VisionLanguageModel : public Model {
 public:
  /// pixels, float [batch, 3, H, W], are the images of the next forward()'s rows; an undefined tensor clears them.
  virtual void set_images(const at::Tensor& pixels) = 0;
  /// Tokens the adapter makes of one image: the visual tokens a step trains on beside the text (positions of the
  /// sequence for an image-prefix strategy; keys and values only for cross-attention, whose max_seq_len() they leave
  /// whole).
  virtual int64_t visual_tokens() const = 0;
};

}  // namespace kforge::sdk
