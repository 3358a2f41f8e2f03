// The built-in model plugin: registers the dense decoder as model "transformer".
#include <kforge/sdk/plugin.h>

#include "model_config.h"
#include "transformer.h"

namespace {

std::shared_ptr<kforge::sdk::Model> make_transformer(const kforge::sdk::BuildContext& ctx) {
  return std::make_shared<kforge::models::Transformer>(kforge::models::ModelConfig::from_view(ctx.section),
                                                       &ctx.components);
}

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::model, "transformer", "1.0.0",
                     "Llama-style decoder: GQA attention with RoPE, SwiGLU/GELU/ReLU MLP or mixture-of-experts "
                     "layers (num_experts > 0, router plugin moe_router), RMSNorm/LayerNorm"),
};

void register_all(kforge::sdk::Registrar& r) { r.add_model("transformer", make_transformer); }

}  // namespace

KFORGE_PLUGIN("kforge-models", "1.0.0", "Built-in decoder models", kComponents, register_all)
