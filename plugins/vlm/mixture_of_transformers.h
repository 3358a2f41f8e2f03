// MixtureOfTransformers: the [vlm] arch "mot" (KempnerForge §10.2, Liang et al. 2024): the [image | text] layout of the
// joint decoder with every layer's norms, projections and FFN per modality, one global causal attention per layer.
#pragma once

#include <kforge/sdk/registrar.h>
#include <kforge/sdk/vision_language_model.h>

#include <memory>
#include <string>
#include <vector>

#include "mot_block.h"
#include "own_stack.h"

namespace kforge::vlm {

/// What [vlm] sets of the MoT stack.
struct MotSettings {
  std::vector<std::string> modalities = {"image", "text"};  ///< mot_modalities
  int64_t image_n_heads = 0;                                ///< mot_image_n_heads (0: [model] n_heads)
  int64_t image_n_kv_heads = 0;                             ///< mot_image_n_kv_heads (0: [model] n_kv_heads)
};

/// The strategy's "transformer": token_embedding -> layers.{i} (MoTBlock) -> mot_norms.text on the text positions ->
/// output_head. Each modality counts its RoPE positions from 0 in its own stream (image 0..P-1, text 0..S-1; a padded
/// clip's image positions from 0 at its first real one, as its unpadded clip's), and the one global attention keeps
/// the padded image positions to themselves.
/// mot_norms.image is built, as KempnerForge's, but the image positions never reach the head, so it gets no gradient;
/// KempnerForge's frozen shared `norm` is not built. At construction every block is the identity (its o_proj and
/// down_proj weights are zero); the other weights are initialised as the transformer's.
class MixtureOfTransformers final : public OwnStack {
 public:
  /// Throws sdk::ConfigError, naming the key and its value, for modalities other than ["image", "text"], image head
  /// counts other than the model's, and image tokens that leave no text position.
  MixtureOfTransformers(const builtin::models::ModelConfig& config, int64_t image_positions,
                        const MotSettings& settings);

  /// A dense transformer's FLOPs over the image and text positions, per text token: each position runs through one
  /// modality's weights.
  double flops_per_token(int64_t seq_len) const override;

  /// The dense transformer's parameter a warm start copies into stack parameter `name`: the name without its modality
  /// ("layers.0.attention.q_proj.image.weight" -> "layers.0.attention.q_proj.weight"); mot_norms.{m} take the final
  /// "norm". The embedding and the head keep their names.
  static std::string dense_name(const std::string& name);

 protected:
  at::Tensor run_layers(const at::Tensor& x, const at::Tensor& doc_starts) override;

 private:
  std::vector<std::shared_ptr<MoTBlock>> mot_layers_;
};

/// The factory the plugin registers: [model] (parts.text_config) sizes the stack, which replaces the text model
/// (released), the [vlm] keys set it. With mot_warm_start_from_text, the strategy starts from the text checkpoint of
/// mot_warm_start_path (every modality's copy from the dense weight).
std::shared_ptr<sdk::VisionLanguageModel> make_mot(const sdk::BuildContext& ctx, sdk::VisionLanguageParts parts);

}  // namespace kforge::vlm
