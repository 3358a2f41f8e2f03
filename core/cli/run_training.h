// `kforge run`'s training: the library's run_training (train/trainer.h) with the host's logging and
// allocator settings, its outcome turned into the process exit code.
#pragma once

#include "config/job_config.h"
#include "plugins/registry.h"
#include "train/trainer.h"

namespace kforge::cli {

/// Runs training for `kforge run` and returns the process exit code (logs errors itself). `options` adds hooks (the
/// Python module's `kforge.train`).
int run_from_cli(const config::JobConfig& job, const plugins::Registry& registry, train::TrainingOptions options = {});

}  // namespace kforge::cli
