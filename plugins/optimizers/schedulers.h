// Scheduler factories: cosine, linear, wsd, constant, rex and none, read from [scheduler].
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kforge/sdk/registrar.h"
#include "phased_schedule.h"

namespace kforge::builtin::optimizers {

/// The schedule `name` describes for this config and run length. decay_steps unset (or 0, as
/// KempnerForge's `decay_steps or ...`) means max_steps - warmup_steps [- stable_steps for wsd].
PhasedScheduleSpec schedule_spec(const std::string& name, const sdk::ConfigView& cfg, int64_t max_steps);

/// A SchedulerFactory for `name` (one of the six above).
sdk::SchedulerFactory scheduler_factory(std::string name);

}  // namespace kforge::builtin::optimizers
