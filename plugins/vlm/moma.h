// MoMa: the [vlm] arch "moma" (KempnerForge §10.2, Lin et al. 2024, arXiv:2407.21770): the [image | text] layout of the
// joint decoder with shared attention and, in every layer, per-modality groups of expert-choice routed FFN experts.
#pragma once

#include <kforge/sdk/registrar.h>
#include <kforge/sdk/vision_language_model.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "moma_block.h"
#include "own_stack.h"

namespace kforge::vlm {

/// What [vlm] sets of the MoMa stack.
struct MoMaSettings {
  std::vector<std::string> modalities = {"image", "text"};                            ///< moma_modalities
  std::map<std::string, int64_t> experts_per_modality = {{"image", 4}, {"text", 4}};  ///< moma_experts_per_modality
  /// moma_capacity_factor: the fraction of its modality's tokens each expert picks (0: 1 / the modality's experts).
  double capacity_factor = 0.0;
  bool gumbel_noise = true;  ///< moma_gumbel_noise: Gumbel-sigmoid router noise in training
};

/// The strategy's "transformer": token_embedding -> layers.{i} (MoMaBlock) -> norm on the text positions ->
/// output_head, with one RoPE axis from 0 at the first image token (as the joint decoder's; for a padded clip at its
/// first real one, the padding a document of its own that no other position attends to, and no expert picks).
/// Initialised as the transformer (routers' gates N(0, init_std), experts' down_proj at the residual std).
class MoMa final : public OwnStack {
 public:
  /// Throws sdk::ConfigError, naming the key and its value, for modalities other than ["image", "text"], expert counts
  /// missing or below 1, a capacity factor outside [0, 1], and image tokens that leave no text position.
  MoMa(const builtin::models::ModelConfig& config, int64_t image_positions, const MoMaSettings& settings);

  /// Per text token: a dense transformer's FLOPs over the image and text positions with each position's FFN replaced by
  /// its modality's gate and, on average, experts * capacity_factor experts.
  double flops_per_token(int64_t seq_len) const override;
  /// "moma/image_coverage" and "moma/text_coverage": the fraction of the modality's tokens that at least one expert
  /// picked in the last forward, averaged over the layers (none before a forward).
  std::vector<std::pair<std::string, double>> step_metrics() override;
  /// The layers, in order.
  const std::vector<std::shared_ptr<MoMaBlock>>& layers() const { return moma_layers_; }

 protected:
  at::Tensor run_layers(const at::Tensor& x, const at::Tensor& doc_starts) override;

 private:
  std::array<int64_t, 2> experts_{};         ///< per modality, indexed as kModalities
  std::array<double, 2> capacity_factor_{};  ///< resolved: the setting, or 1 / experts
  std::vector<std::shared_ptr<MoMaBlock>> moma_layers_;
};

/// The factory the plugin registers: [model] (parts.text_config) sizes the stack, which replaces the text model
/// (released), the [vlm] keys set it.
std::shared_ptr<sdk::VisionLanguageModel> make_moma(const sdk::BuildContext& ctx, sdk::VisionLanguageParts parts);

}  // namespace kforge::vlm
