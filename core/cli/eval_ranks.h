// The processes of one `kforge eval` under `kforge launch`: their world group, or this process alone.
#pragma once

#include <memory>

#include "config/job_config.h"
#include "dist/runtime.h"

namespace kforge::cli {

/// Under `kforge launch` (RANK/WORLD_SIZE set), the rendezvous of every rank and their world group as plain data
/// parallelism, whatever the checkpoint's [distributed] mesh was (each rank holds the whole model); its groups run on
/// the CPU (Gloo), as only per-batch results travel. Else a runtime of one process.
std::unique_ptr<dist::Runtime> join_eval_ranks(const config::JobConfig& job);

}  // namespace kforge::cli
