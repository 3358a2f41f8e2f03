// VisionLanguageModel: a modality strategy, selected by [vlm] arch: the model a vision-language run trains, built from
// the configured vision encoder, adapter and text model.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kforge/sdk/adapter.h"
#include "kforge/sdk/config_view.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/time_embedding.h"
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
  /// Images per row: 1 for images, [video] max_frames for clips (set_images then takes [batch, frames, 3, H, W]).
  int64_t frames = 1;
  /// [time_embedding] type's, with clips only; null (the default, and type = "none"): none. The strategy registers it
  /// as its module "time_embedding" and adds its vector of each frame's time to that frame's visual tokens.
  std::shared_ptr<TimeEmbedding> time_embedding;
};

/// forward(tokens) runs the images set by set_images() through the encoder and adapter and the tokens through the text
/// model, and returns logits [batch, S, vocab] of the token positions. blocks() are the text model's under
/// "transformer." (or, for a strategy that builds its own stack, its layers under that prefix).
class VisionLanguageModel : public Model {
 public:
  /// pixels, float [batch, 3, H, W], are the images of the next forward()'s rows, or [batch, F, 3, H, W] their clips
  /// of F frames in order; an undefined tensor clears them. With clips, frame_mask, bool [batch, F], says which frames
  /// are real: each row's real frames first, then padding, which must change nothing of the real tokens' outputs and
  /// gradients (undefined: all real). frame_times, float [batch, F], is each frame's time in its clip in seconds, which
  /// parts.time_embedding embeds (undefined: every frame at 0).
  virtual void set_images(const at::Tensor& pixels, const at::Tensor& frame_mask = {},
                          const at::Tensor& frame_times = {}) = 0;
  /// Tokens the adapter makes of one image (or frame): a row's visual tokens are parts.frames times as many (positions
  /// of the sequence for an image-prefix strategy; keys and values only for cross-attention, whose max_seq_len() they
  /// leave whole).
  virtual int64_t visual_tokens() const = 0;

  /// A dense text model's checkpoint step directory to start this model from, as the strategy's own [vlm] keys ask
  /// (e.g. MoT's mot_warm_start_path), or "" (the default): none. Before a run's first step the host reads that
  /// checkpoint's model tensors and copies in what from_text_state() makes of them (a resumed checkpoint's weights
  /// then replace them).
  virtual std::string text_warm_start_path() const { return ""; }
  /// This model's parameters made from a text model's `state` (named as a text run saves them, or under "transformer."
  /// as a joint-decoder run does): {a name of named_parameters(): its value}. The host checks each shape; the default
  /// makes none. Throws sdk::Error naming what `state` lacks.
  virtual std::map<std::string, at::Tensor> from_text_state(const std::map<std::string, at::Tensor>& state) const {
    (void)state;
    return {};
  }
};

}  // namespace kforge::sdk
