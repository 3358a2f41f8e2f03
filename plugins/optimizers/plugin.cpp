// The optimizers plugin's entry point: component metadata and registration.
#include "adamw.h"
#include "kforge/sdk/plugin.h"
#include "lion.h"
#include "muon.h"
#include "schedule_free_adamw.h"
#include "schedulers.h"
#include "sgd.h"

namespace {

#define KFORGE_DECAY_EMBEDDINGS_KEY \
  {"decay_embeddings", "bool", "false", "also decay embedding weights (KempnerForge decays them)"}

constexpr kforge_config_key kDecayKeys[] = {KFORGE_DECAY_EMBEDDINGS_KEY};
constexpr kforge_config_key kSgdKeys[] = {
    KFORGE_DECAY_EMBEDDINGS_KEY,
    {"sgd_momentum", "float", "0.9", "momentum factor (>= 0; dampening 0)"},
    {"sgd_nesterov", "bool", "false", "Nesterov momentum (needs sgd_momentum > 0)"},
};

constexpr const char* kSchedulers[] = {"cosine", "linear", "wsd", "constant", "rex", "none"};

// The [optimizer] and [scheduler] keys of the core schema each component reads.
constexpr const char* kAdamWCoreKeys[] = {"lr", "weight_decay", "betas", "eps", "fused"};
constexpr const char* kLionCoreKeys[] = {"lr", "weight_decay", "betas"};
constexpr const char* kSgdCoreKeys[] = {"lr", "weight_decay"};
constexpr const char* kScheduleFreeCoreKeys[] = {"lr", "weight_decay", "betas", "eps", "schedule_free_warmup_steps"};
constexpr const char* kMuonCoreKeys[] = {
    "lr", "weight_decay", "betas", "eps", "muon_momentum", "muon_ns_steps", "muon_adam_lr"};
constexpr const char* kDecayCoreKeys[] = {"warmup_steps", "decay_steps", "min_lr_ratio"};
constexpr const char* kWsdCoreKeys[] = {"warmup_steps", "decay_steps", "min_lr_ratio", "stable_steps",
                                        "wsd_decay_type"};
constexpr const char* kConstantCoreKeys[] = {"warmup_steps"};
constexpr const char* kRexCoreKeys[] = {"warmup_steps", "decay_steps", "min_lr_ratio", "rex_alpha"};

using kforge::sdk::capabilities;
using kforge::sdk::core_keys;

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "adamw", "1.0.0",
                               "AdamW (decoupled weight decay), equal to torch.optim.AdamW", kDecayKeys,
                               core_keys(kAdamWCoreKeys)),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "lion", "1.0.0",
                               "Lion: sign of interpolated momentum, decoupled weight decay, one state tensor",
                               kDecayKeys, core_keys(kLionCoreKeys)),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "sgd", "1.0.0",
                               "SGD with (Nesterov) momentum, equal to torch.optim.SGD", kSgdKeys,
                               core_keys(kSgdCoreKeys)),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "schedule_free_adamw", "1.0.0",
                               "Schedule-Free AdamW; evaluates at the averaged weights (use scheduler none)",
                               kDecayKeys, core_keys(kScheduleFreeCoreKeys), capabilities(KFORGE_CAP_HAS_EVAL_WEIGHTS)),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "muon", "1.0.0",
                               "Muon (Newton-Schulz momentum) for matrices, AdamW for the rest", kDecayKeys,
                               core_keys(kMuonCoreKeys), capabilities(KFORGE_CAP_NEEDS_WHOLE_MATRICES)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "cosine", "1.0.0", "linear warmup, cosine decay to min_lr_ratio",
                     core_keys(kDecayCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "linear", "1.0.0", "linear warmup, linear decay to min_lr_ratio",
                     core_keys(kDecayCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "wsd", "1.0.0",
                     "warmup, stable, then cosine|linear|sqrt decay (wsd_decay_type)", core_keys(kWsdCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "constant", "1.0.0", "linear warmup, then constant",
                     core_keys(kConstantCoreKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::scheduler, "rex", "1.0.0", "linear warmup, REX decay (1-p)^rex_alpha floored",
                     core_keys(kRexCoreKeys)),
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
