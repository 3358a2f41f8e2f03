// The built-in router plugin: registers softmax_topk and sigmoid_topk (kind router).
#include <kforge/sdk/plugin.h>

#include "sigmoid_topk.h"
#include "softmax_topk.h"

namespace {

using kforge::sdk::reads;

using kforge::sdk::BuildContext;
using kforge::sdk::RouterSpec;

std::shared_ptr<kforge::sdk::Router> make_softmax_topk(const BuildContext&, const RouterSpec& spec) {
  return std::make_shared<kforge::builtin::routers::SoftmaxTopK>(spec);
}

/// Reads moe_sequence_aux_loss_weight and moe_bias_schedule from the router's section ([model]).
std::shared_ptr<kforge::sdk::Router> make_sigmoid_topk(const BuildContext& ctx, const RouterSpec& spec) {
  kforge::builtin::routers::SigmoidTopKSettings settings;
  settings.sequence_aux_loss_weight = ctx.section.get_float("moe_sequence_aux_loss_weight");
  settings.bias_schedule = kforge::builtin::routers::parse_bias_schedule(ctx.section.get_string("moe_bias_schedule"));
  return std::make_shared<kforge::builtin::routers::SigmoidTopK>(spec, settings);
}

// The [model] keys of the core schema each router reads (num_experts and moe_top_k through its RouterSpec).
constexpr kforge_config_key kSoftmaxCoreKeys[] = {reads("num_experts"), reads("moe_top_k")};
constexpr kforge_config_key kSigmoidCoreKeys[] = {
    reads("num_experts"), reads("moe_top_k"), reads("moe_sequence_aux_loss_weight"), reads("moe_bias_schedule"),
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::router, "softmax_topk", "1.0.0",
                     "Mixtral router: softmax, renormalised top-k, Switch load-balance loss, router z-loss",
                     kforge::sdk::config_keys(kSoftmaxCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::router, "sigmoid_topk", "1.0.0",
                     "DeepSeek-V3 router: sigmoid + EMA-balanced expert bias (moe_bias_schedule), "
                     "optional sequence aux loss",
                     kforge::sdk::config_keys(kSigmoidCoreKeys)),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_router("softmax_topk", make_softmax_topk);
  r.add_router("sigmoid_topk", make_sigmoid_topk);
}

}  // namespace

KFORGE_PLUGIN("kforge-routers", "1.0.0", "Built-in mixture-of-experts routers", kComponents, register_all)
