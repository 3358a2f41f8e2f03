// The training entry points: from the CLI, and as a library (the analogue of KempnerForge's
// run_training(config, step_fn, hooks)) for experiments that bring their own step or hooks.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/hook.h"
#include "plugins/registry.h"

namespace kforge::train {

struct TrainState;
struct StepResult;

/// Runs training for `kforge run` and returns the process exit code (logs errors itself).
int run_from_cli(const config::JobConfig& job, const plugins::Registry& registry);

}  // namespace kforge::train
