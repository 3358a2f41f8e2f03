// The optimizers plugin's entry point: component metadata and registration.
#include "adamw.h"
#include "kforge/sdk/plugin.h"
#include "schedulers.h"

namespace {

constexpr kforge_config_key kAdamWKeys[] = {
    {"decay_embeddings", "bool", "false", "also decay embedding weights (KempnerForge decays them)"},
};

constexpr const char* kSchedulers[] = {"cosine", "linear", "wsd", "constant", "rex", "none"};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "adamw", "1.0.0",
                               "AdamW (decoupled weight decay), equal to torch.optim.AdamW", kAdamWKeys),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "cosine", "1.0.0", "linear warmup, cosine decay to min_lr_ratio"),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "linear", "1.0.0", "linear warmup, linear decay to min_lr_ratio"),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "wsd", "1.0.0",
                     "warmup, stable, then cosine|linear|sqrt decay (wsd_decay_type)"),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "constant", "1.0.0", "linear warmup, then constant"),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "rex", "1.0.0", "linear warmup, REX decay (1-p)^rex_alpha floored"),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "none", "1.0.0", "factor 1 at every step, no warmup"),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_optimizer("adamw", kforge::optimizers::make_adamw);
  for (const char* name : kSchedulers) r.add_scheduler(name, kforge::optimizers::scheduler_factory(name));
}

}  // namespace

KFORGE_PLUGIN("optimizers", "1.0.0", "AdamW and the warmup/decay learning-rate schedulers", kComponents, register_all)
