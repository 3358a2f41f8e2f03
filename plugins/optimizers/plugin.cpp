// The optimizers plugin's entry point: component metadata and registration.
#include "adamw.h"
#include "kforge/sdk/plugin.h"
#include "lion.h"
#include "muon.h"
#include "schedule_free_adamw.h"
#include "schedulers.h"
#include "sgd.h"

namespace {

using kforge::sdk::reads;
using kforge::sdk::section_key;

#define KFORGE_DECAY_EMBEDDINGS_KEY \
  {"decay_embeddings", "bool", "false", "also decay embedding weights (KempnerForge decays them)"}

constexpr const char* kSchedulers[] = {"cosine", "linear", "wsd", "constant", "rex", "none"};

// The keys each optimizer reads: [optimizer] keys of the core schema, then its own.
constexpr kforge_config_key kAdamWKeys[] = {
    reads("lr"), reads("weight_decay"), reads("betas"), reads("eps"), reads("fused"), KFORGE_DECAY_EMBEDDINGS_KEY,
};
constexpr kforge_config_key kLionKeys[] = {
    reads("lr"), reads("weight_decay"), reads("betas"), KFORGE_DECAY_EMBEDDINGS_KEY,
};
constexpr kforge_config_key kSgdKeys[] = {
    reads("lr"),
    reads("weight_decay"),
    KFORGE_DECAY_EMBEDDINGS_KEY,
    {"sgd_momentum", "float", "0.9", "momentum factor (>= 0; dampening 0)"},
    {"sgd_nesterov", "bool", "false", "Nesterov momentum (needs sgd_momentum > 0)"},
};
// Schedule-Free's and Muon's own keys are [optimizer] keys with any optimizer selected (section_key), as
// in KempnerForge's flat OptimizerConfig.
constexpr kforge_config_key kScheduleFreeKeys[] = {
    reads("lr"), reads("weight_decay"), reads("betas"), reads("eps"), KFORGE_DECAY_EMBEDDINGS_KEY,
    section_key({"schedule_free_warmup_steps", "int", "0", "Schedule-Free warmup steps"}),
};
constexpr kforge_config_key kMuonKeys[] = {
    reads("lr"),
    reads("weight_decay"),
    reads("betas"),
    reads("eps"),
    KFORGE_DECAY_EMBEDDINGS_KEY,
    section_key({"muon_momentum", "float", "0.95", "Muon momentum"}),
    section_key({"muon_ns_steps", "int", "5", "Newton-Schulz iterations"}),
    section_key({"muon_adam_lr", "float", "", "learning rate of Muon's internal AdamW (unset: lr)"}),
};
// The [scheduler] keys of the core schema each scheduler reads, then WSD's and REX's own, which are [scheduler] keys
// with any scheduler selected (section_key), as in KempnerForge's flat SchedulerConfig.
constexpr kforge_config_key kDecayCoreKeys[] = {reads("warmup_steps"), reads("decay_steps"), reads("min_lr_ratio")};
constexpr kforge_config_key kWsdKeys[] = {
    reads("warmup_steps"),
    reads("decay_steps"),
    reads("min_lr_ratio"),
    section_key({"stable_steps", "int", "", "WSD stable phase length (unset: 0)", "0.."}),
    section_key({"wsd_decay_type", "string", "\"cosine\"", "WSD decay shape", "cosine|linear|sqrt"}),
};
constexpr kforge_config_key kConstantCoreKeys[] = {reads("warmup_steps")};
constexpr kforge_config_key kRexKeys[] = {
    reads("warmup_steps"),
    reads("decay_steps"),
    reads("min_lr_ratio"),
    section_key({"rex_alpha", "float", "1.0", "REX exponent", "0<.."}),
};

using kforge::sdk::capabilities;
using kforge::sdk::config_keys;

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "adamw", "1.0.0",
                               "AdamW (decoupled weight decay), equal to torch.optim.AdamW", kAdamWKeys),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "lion", "1.0.0",
                               "Lion: sign of interpolated momentum, decoupled weight decay, one state tensor",
                               kLionKeys),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "sgd", "1.0.0",
                               "SGD with (Nesterov) momentum, equal to torch.optim.SGD", kSgdKeys),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "schedule_free_adamw", "1.0.0",
                               "Schedule-Free AdamW; evaluates at the averaged weights (use scheduler none)",
                               kScheduleFreeKeys, capabilities(KFORGE_CAP_HAS_EVAL_WEIGHTS)),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "muon", "1.0.0",
                               "Muon (Newton-Schulz momentum) for matrices, AdamW for the rest", kMuonKeys,
                               capabilities(KFORGE_CAP_NEEDS_WHOLE_MATRICES)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "cosine", "1.0.0", "linear warmup, cosine decay to min_lr_ratio",
                     config_keys(kDecayCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "linear", "1.0.0", "linear warmup, linear decay to min_lr_ratio",
                     config_keys(kDecayCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "wsd", "1.0.0",
                     "warmup, stable, then cosine|linear|sqrt decay (wsd_decay_type)", config_keys(kWsdKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "constant", "1.0.0", "linear warmup, then constant",
                     config_keys(kConstantCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "rex", "1.0.0", "linear warmup, REX decay (1-p)^rex_alpha floored",
                     config_keys(kRexKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "none", "1.0.0", "factor 1 at every step, no warmup"),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_optimizer("adamw", kforge::builtin::optimizers::make_adamw);
  r.add_optimizer("lion", kforge::builtin::optimizers::make_lion);
  r.add_optimizer("sgd", kforge::builtin::optimizers::make_sgd);
  r.add_optimizer("schedule_free_adamw", kforge::builtin::optimizers::make_schedule_free_adamw);
  r.add_optimizer("muon", kforge::builtin::optimizers::make_muon);
  for (const char* name : kSchedulers) r.add_scheduler(name, kforge::builtin::optimizers::scheduler_factory(name));
}

}  // namespace

KFORGE_PLUGIN("optimizers", "1.0.0", "AdamW, Lion, SGD, Schedule-Free AdamW, Muon and the learning-rate schedulers",
              kComponents, register_all)
