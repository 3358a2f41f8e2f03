// MixtureOfTransformers: the [vlm] checks, the blocks, the per-modality RoPE positions (per row for a padded clip) and
// the factory.
#include "mixture_of_transformers.h"

#include <ATen/ATen.h>
#include <kforge/sdk/config_view.h>
#include <kforge/sdk/error.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "own_stack_strategy.h"

namespace kforge::vlm {

namespace models = builtin::models;

namespace {

constexpr const char* kArch = "mot";

// Head counts must be equal across modalities: `value` of `key` must be 0 (the model's) or [model] `model_key`.
void require_model_heads(const char* key, int64_t value, const char* model_key, int64_t model_value) {
  if (value == 0 || value == model_value) return;
  throw sdk::ConfigError(std::string("[vlm] ") + key + " = " + std::to_string(value) + " differs from [model] " +
                         model_key + " = " + std::to_string(model_value) +
                         ": head counts must be equal across modalities; set it to 0 (the model's) or " +
                         std::to_string(model_value));
}

}  // namespace

MixtureOfTransformers::MixtureOfTransformers(const models::ModelConfig& config, int64_t image_positions,
                                             const MotSettings& s)
    : OwnStack(kArch, config, image_positions) {
  require_image_then_text("[vlm] mot_modalities", s.modalities);
  require_model_heads("mot_image_n_heads", s.image_n_heads, "n_heads", config_.n_heads);
  require_model_heads("mot_image_n_kv_heads", s.image_n_kv_heads, "n_kv_heads", config_.n_kv_heads);
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    mot_layers_.push_back(std::make_shared<MoTBlock>(config_));
    add_layer(mot_layers_.back());
  }
  const PerModality<models::Norm> norms = register_per_modality<models::Norm>(*this, "mot_norms", [&](size_t) {
    return models::make_norm(config_.norm_type, config_.dim, config_.norm_eps, config_.fused_kernels);
  });
  set_final_norm(norms[kText]);
  init_weights();
  for (const auto& layer : mot_layers_) layer->zero_residual_outputs();
}

std::string MixtureOfTransformers::dense_name(const std::string& name) {
  std::string dense;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t dot = std::min(name.find('.', start), name.size());
    const std::string part = name.substr(start, dot - start);
    if (std::find(kModalities.begin(), kModalities.end(), part) == kModalities.end()) {
      dense += (dense.empty() ? "" : ".") + (dense.empty() && part == "mot_norms" ? std::string("norm") : part);
    }
    start = dot + 1;
  }
  return dense;
}

at::Tensor MixtureOfTransformers::run_layers(const at::Tensor& x, const at::Tensor& doc_starts) {
  const int64_t text = x.size(1) - image_positions_;
  const auto [cos, sin] = rope_.slice(std::max(image_positions_, text), x);
  ModalityRope rope{{cos.narrow(0, 0, image_positions_), cos.narrow(0, 0, text)},
                    {sin.narrow(0, 0, image_positions_), sin.narrow(0, 0, text)}};
  if (doc_starts.defined()) {  // per row: the real image positions from 0 at the first, the padding's from 0 too
    const at::Tensor image = doc_starts.narrow(1, 0, image_positions_);
    std::tie(rope.cos[kImage], rope.sin[kImage]) =
        rope_.gather(at::arange(image_positions_, image.options()) - image, x);
  }
  return run_blocks(x, [this, rope, doc_starts](size_t i, models::AttentionSeam seam) -> BlockFn {
    return [layer = mot_layers_[i], image_positions = image_positions_, rope, doc_starts, seam](const at::Tensor& in) {
      return layer->forward(in, image_positions, rope, doc_starts, seam);
    };
  });
}

double MixtureOfTransformers::flops_per_token(int64_t seq_len) const {
  const int64_t positions = seq_len + image_positions_;
  return config_.flops_per_token(positions) * static_cast<double>(positions) / static_cast<double>(seq_len);
}

std::shared_ptr<sdk::VisionLanguageModel> make_mot(const sdk::BuildContext& ctx, sdk::VisionLanguageParts parts) {
  const sdk::ConfigView& vlm = ctx.section;
  const MotSettings settings{.modalities = vlm.get_string_list("mot_modalities"),
                             .image_n_heads = vlm.get_int("mot_image_n_heads"),
                             .image_n_kv_heads = vlm.get_int("mot_image_n_kv_heads")};
  TextWarmStart warm_start;
  if (vlm.get_bool("mot_warm_start_from_text")) {  // the config rules require the path with it
    warm_start = {vlm.get_string("mot_warm_start_path"), "mot_warm_start_path", &MixtureOfTransformers::dense_name};
  }
  return make_own_stack_strategy<MixtureOfTransformers>(
      std::move(parts), kArch, settings,
      "per-modality mixture-of-experts FFNs are not built; set num_experts = 0 (or use arch = \"moma\" for "
      "modality-aware experts)",
      "its per-modality layers have no cached decoding (KempnerForge's MoT is training-only too)",
      std::move(warm_start));
}

}  // namespace kforge::vlm
