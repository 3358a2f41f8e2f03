// The `kforge run` training entry point (the library one, run_training, is in train/trainer.h).
#pragma once

#include "config/job_config.h"
#include "plugins/registry.h"

namespace kforge::train {

/// Runs training for `kforge run` and returns the process exit code (logs errors itself).
int run_from_cli(const config::JobConfig& job, const plugins::Registry& registry);

}  // namespace kforge::train
