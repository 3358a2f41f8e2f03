// The built-in vision-language plugin: registers the modality strategies ([vlm] arch), each composing the configured
// vision encoder, adapter and text model.
#include <kforge/sdk/plugin.h>

#include "joint_decoder.h"

namespace {

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::modality_strategy, "joint_decoder", "1.0.0",
                     "Image tokens as a prefix of the text in one causal stack (the text model needs the "
                     "embedding_prefix capability)"),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_modality_strategy("joint_decoder", [](const kforge::sdk::BuildContext&, kforge::sdk::VisionLanguageParts parts) {
    return std::make_shared<kforge::vlm::JointDecoder>(std::move(parts));
  });
}

}  // namespace

KFORGE_PLUGIN("kforge-vlm", "1.0.0", "Built-in vision-language modality strategies", kComponents, register_all)
