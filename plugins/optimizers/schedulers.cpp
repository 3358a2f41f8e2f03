// Scheduler factories over PhasedSchedule (see schedulers.h).
#include "schedulers.h"

#include "kforge/sdk/error.h"

namespace kforge::builtin::optimizers {
namespace {

int64_t optional_int(const sdk::ConfigView& cfg, const char* key) { return cfg.has(key) ? cfg.get_int(key) : 0; }

DecayShape wsd_shape(const std::string& type) {
  if (type == "cosine") return DecayShape::cosine;
  if (type == "linear") return DecayShape::linear;
  if (type == "sqrt") return DecayShape::sqrt;
  throw sdk::ConfigError("[scheduler] wsd_decay_type = \"" + type + "\": must be cosine, linear or sqrt");
}

}  // namespace

PhasedScheduleSpec schedule_spec(const std::string& name, const sdk::ConfigView& cfg, int64_t max_steps) {
  PhasedScheduleSpec spec;
  if (name == "none") return spec;  // factor 1 always, no warmup
  spec.warmup_steps = cfg.get_int("warmup_steps");
  spec.min_lr_ratio = cfg.get_float("min_lr_ratio");
  if (name == "cosine") {
    spec.shape = DecayShape::cosine;
  } else if (name == "linear") {
    spec.shape = DecayShape::linear;
  } else if (name == "wsd") {
    spec.shape = wsd_shape(cfg.get_string("wsd_decay_type"));
    spec.stable_steps = optional_int(cfg, "stable_steps");
  } else if (name == "rex") {
    spec.shape = DecayShape::rex;
    spec.rex_alpha = cfg.get_float("rex_alpha");
  } else if (name == "constant") {
    spec.shape = DecayShape::constant;
  } else {
    throw sdk::Error("optimizers plugin: no scheduler named '" + name + "'");
  }
  const int64_t decay = optional_int(cfg, "decay_steps");
  spec.decay_steps = decay > 0 ? decay : max_steps - spec.warmup_steps - spec.stable_steps;
  return spec;
}

sdk::SchedulerFactory scheduler_factory(std::string name) {
  return [name = std::move(name)](const sdk::BuildContext& ctx, int64_t max_steps) -> std::unique_ptr<sdk::Scheduler> {
    return std::make_unique<PhasedSchedule>(schedule_spec(name, ctx.section, max_steps));
  };
}

}  // namespace kforge::builtin::optimizers
