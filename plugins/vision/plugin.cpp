// The built-in vision plugin: registers kforge_vision's encoders (kind vision_encoder: random, siglip2, clip) and
// adapters (kind adapter: mlp_2layer, linear, avgpool, attentional_pool), each built from its config section.
#include <kforge/sdk/plugin.h>

#include "adapter_factory.h"
#include "adapter_rules.h"
#include "encoder_factory.h"

namespace {

using kforge::sdk::reads;

using kforge::sdk::AdapterSpec;
using kforge::sdk::BuildContext;

// The encoder `type` from the [vision_encoder] keys; random's seed is its own key.
kforge::sdk::VisionEncoderFactory encoder_factory(const char* type) {
  return [type](const BuildContext& ctx) -> std::shared_ptr<kforge::sdk::VisionEncoder> {
    kforge::vision::EncoderOptions o;
    o.type = type;
    o.path = ctx.section.get_string("path");
    o.feature_dim = ctx.section.get_int("feature_dim");
    o.num_tokens = ctx.section.get_int("num_tokens");
    if (ctx.section.has("seed")) o.seed = ctx.section.get_int("seed");
    return kforge::vision::make_vision_encoder(o);
  };
}

// The adapter `type` between spec's widths, from the [adapter] keys (each adapter reads the ones it declares).
kforge::sdk::AdapterFactory adapter_factory(const char* type) {
  return [type](const BuildContext& ctx, const AdapterSpec& spec) -> std::shared_ptr<kforge::sdk::Adapter> {
    kforge::vision::AdapterOptions o;
    o.type = type;
    o.in_dim = spec.in_dim;
    o.out_dim = spec.out_dim;
    o.hidden_dim = ctx.section.get_int("hidden_dim");
    o.activation = ctx.section.get_string("activation");
    o.pool_window = ctx.section.get_int("pool_window");
    o.pool_heads = ctx.section.get_int("pool_heads");
    return kforge::vision::make_adapter(o);
  };
}

// The [vision_encoder] and [adapter] keys of the core schema each component reads (random: then its own).
constexpr kforge_config_key kTowerCoreKeys[] = {reads("path"), reads("feature_dim"), reads("num_tokens")};
constexpr kforge_config_key kMlpCoreKeys[] = {reads("hidden_dim"), reads("activation")};
constexpr kforge_config_key kAvgPoolCoreKeys[] = {reads("pool_window")};
constexpr kforge_config_key kAttentionalPoolCoreKeys[] = {reads("pool_window"), reads("pool_heads")};

constexpr kforge_config_key kRandomKeys[] = {
    reads("feature_dim"),
    reads("num_tokens"),
    {"seed", "int", "0", "added to each image's pixel-sum seed (KempnerForge's stub uses 0)"},
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::vision_encoder, "random", "1.0.0",
                               "Weightless deterministic stub: standard normal features seeded by each image's "
                               "pixel sum (num_tokens 16, feature_dim 768 unless set)",
                               kRandomKeys),
    KFORGE_COMPONENT(kforge::sdk::kind::vision_encoder, "siglip2", "1.0.0",
                     "SigLIP2 vision tower (fixed resolution, no CLS) from a local Hugging Face directory (path)",
                     kforge::sdk::config_keys(kTowerCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::vision_encoder, "clip", "1.0.0",
                     "CLIP vision tower (CLS stripped) from a local Hugging Face directory (path)",
                     kforge::sdk::config_keys(kTowerCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::adapter, "mlp_2layer", "1.0.0",
                     "LLaVA connector: Linear, activation, Linear (biased), token count kept",
                     kforge::sdk::config_keys(kMlpCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::adapter, "linear", "1.0.0", "One biased Linear, token count kept"),
    KFORGE_COMPONENT(kforge::sdk::kind::adapter, "avgpool", "1.0.0",
                     "Window average over the square patch grid (ragged edges), then a biased Linear",
                     kforge::sdk::config_keys(kAvgPoolCoreKeys),
                     kforge::sdk::capabilities(KFORGE_CAP_POOLS_PATCH_GRID)),
    KFORGE_COMPONENT(kforge::sdk::kind::adapter, "attentional_pool", "1.0.0",
                     "Molmo2 connector: per window, attention with the window mean as query (grid divisible by "
                     "the window)",
                     kforge::sdk::config_keys(kAttentionalPoolCoreKeys),
                     kforge::sdk::capabilities(KFORGE_CAP_POOLS_PATCH_GRID),
                     kforge::sdk::validator<kforge::vision::check_attentional_pool>()),
};

void register_all(kforge::sdk::Registrar& r) {
  for (const char* type : {"random", "siglip2", "clip"}) r.add_vision_encoder(type, encoder_factory(type));
  for (const char* type : {"mlp_2layer", "linear", "avgpool", "attentional_pool"}) {
    r.add_adapter(type, adapter_factory(type));
  }
}

}  // namespace

KFORGE_PLUGIN("kforge-vision", "1.0.0", "Built-in VLM vision encoders and adapters", kComponents, register_all)
