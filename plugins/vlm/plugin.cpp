// The built-in vision-language plugin: registers the modality strategies ([vlm] arch), each composing the configured
// vision encoder, adapter and text model.
#include <kforge/sdk/plugin.h>

#include "arch_rules.h"
#include "cross_attention.h"
#include "joint_decoder.h"
#include "mixture_of_transformers.h"
#include "moma.h"

namespace {

using kforge::sdk::reads;

// The [vlm] keys of each arch the strategies read (list-plugins shows them); each arch checks them (arch_rules.h).
constexpr kforge_config_key kCrossAttentionKeys[] = {
    reads("cross_attention_every_n_layers"), reads("cross_attention_n_heads"), reads("cross_attention_n_kv_heads"),
};
constexpr kforge_config_key kMotKeys[] = {
    reads("mot_modalities"), reads("mot_image_n_heads"), reads("mot_image_n_kv_heads"),
    reads("mot_warm_start_from_text"), reads("mot_warm_start_path"),
};
constexpr kforge_config_key kMomaKeys[] = {
    reads("moma_modalities"), reads("moma_experts_per_modality"), reads("moma_capacity_factor"),
    reads("moma_gumbel_noise"),
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "joint_decoder", "1.0.0",
                     "Image tokens as a prefix of the text in one causal stack (the text model needs the "
                     "embedding_prefix capability)"),
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "cross_attention", "1.0.0",
                     "Text-only residual stream; cross-attention blocks over the image tokens after every n-th text "
                     "block (each the identity at the start: zero-initialised outputs)",
                     kforge::sdk::config_keys(kCrossAttentionKeys),
                     kforge::sdk::validator<kforge::vlm::check_cross_attention>()),
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "mot", "1.0.0",
                     "Mixture-of-Transformers: per-modality norms, projections and FFNs around one global causal "
                     "attention over [image | text] (identity blocks at initialisation; training only)",
                     kforge::sdk::config_keys(kMotKeys), kforge::sdk::validator<kforge::vlm::check_mot>()),
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "moma", "1.0.0",
                     "Mixture of modality-aware experts: shared attention over [image | text], per-modality groups of "
                     "expert-choice sigmoid-routed FFN experts (training only)",
                     kforge::sdk::config_keys(kMomaKeys), kforge::sdk::validator<kforge::vlm::check_moma>()),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_modality_strategy("joint_decoder", [](const kforge::sdk::BuildContext&, kforge::sdk::VisionLanguageParts parts) {
    return std::make_shared<kforge::vlm::JointDecoder>(std::move(parts));
  });
  r.add_modality_strategy("cross_attention", kforge::vlm::make_cross_attention);
  r.add_modality_strategy("mot", kforge::vlm::make_mot);
  r.add_modality_strategy("moma", kforge::vlm::make_moma);
}

}  // namespace

KFORGE_PLUGIN("kforge-vlm", "1.0.0", "Built-in vision-language modality strategies", kComponents, register_all)
