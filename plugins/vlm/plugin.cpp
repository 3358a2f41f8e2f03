// The built-in vision-language plugin: registers the modality strategies ([vlm] arch), each composing the configured
// vision encoder, adapter and text model.
#include <kforge/sdk/plugin.h>

#include "arch_rules.h"
#include "cross_attention.h"
#include "joint_decoder.h"
#include "mixture_of_transformers.h"
#include "moma.h"

namespace {

// The [vlm] keys of each arch (each arch checks them: arch_rules.h), and the module alias each adds to [vlm]
// module_patterns (the parameters it adds to the text model's, for freeze directives).
constexpr kforge_config_key kCrossAttentionKeys[] = {
    {"cross_attention_every_n_layers", "int", "4", "a cross-attention block after every n-th text block"},
    {"cross_attention_n_heads", "int", "0", "cross-attention heads (0: model n_heads)"},
    {"cross_attention_n_kv_heads", "int", "0", "cross-attention key/value heads (0: its n_heads)"},
    {"module_patterns", "string_list_dict",
     "{ cross_attention = [\"transformer.cross_attention_layers\", \"transformer.cross_attention_layers.*\"] }",
     "the cross-attention blocks' alias"},
};
constexpr kforge_config_key kMotKeys[] = {
    {"mot_modalities", "string_list", "[\"image\", \"text\"]", "modalities with their own weights"},
    {"mot_image_n_heads", "int", "0", "image-stream heads (0: model n_heads)"},
    {"mot_image_n_kv_heads", "int", "0", "image-stream key/value heads (0: model n_kv_heads)"},
    {"mot_warm_start_from_text", "bool", "false",
     "start from a dense text checkpoint: its weights copied into every modality"},
    {"mot_warm_start_path", "string", "\"\"", "the text checkpoint's step directory (of a text or joint_decoder run)"},
    {"module_patterns", "string_list_dict", "{ mot = [\"transformer.layers\", \"transformer.layers.*\"] }",
     "the modality-specific blocks' alias"},
};
constexpr kforge_config_key kMomaKeys[] = {
    {"moma_modalities", "string_list", "[\"image\", \"text\"]", "modalities with their own expert groups"},
    {"moma_experts_per_modality", "int_dict", "{ image = 4, text = 4 }", "experts per modality"},
    {"moma_capacity_factor", "float", "0.0", "expert-choice capacity (0: 1/#experts of the modality)"},
    {"moma_gumbel_noise", "bool", "true", "Gumbel-sigmoid noise on router scores in training"},
    {"module_patterns", "string_list_dict", "{ moma = [\"transformer.layers\", \"transformer.layers.*\"] }",
     "the modality-aware blocks' alias"},
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "joint_decoder", "1.0.0",
                     "Image tokens as a prefix of the text in one causal stack (the text model needs the "
                     "embedding_prefix capability); tp and ep split the text model as in a text run",
                     kforge::sdk::capabilities(KFORGE_CAP_TENSOR_PARALLEL | KFORGE_CAP_EXPERT_PARALLEL)),
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "cross_attention", "1.0.0",
                     "Text-only residual stream; cross-attention blocks over the image tokens after every n-th text "
                     "block (each the identity at the start: zero-initialised outputs); ep shares out the text "
                     "model's experts as in a text run",
                     kforge::sdk::config_keys(kCrossAttentionKeys),
                     kforge::sdk::validator<kforge::vlm::check_cross_attention>(),
                     kforge::sdk::capabilities(KFORGE_CAP_TEXT_RESIDUAL | KFORGE_CAP_EXPERT_PARALLEL)),
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
