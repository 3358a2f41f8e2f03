// Pipeline orders: checks a schedule's per-rank orders before the first step, and what bubble they leave.
#pragma once

#include <string>
#include <vector>

#include "kforge/sdk/pipeline_schedule.h"

namespace kforge::train {

/// Checks `orders` (one per rank, as sdk::PipelineSchedule::order gives them for `micro_batches`, each rank holding
/// `chunks` chunks): every (chunk, micro-batch) runs its forward once and then its backward once; and runs them all
/// with a forward costing 1 and a backward 2, sends that never wait and receives that do. Returns the bubble: the
/// fraction of ranks x the whole time that ranks sit idle ((pp - 1) / (m + pp - 1) for GPipe and 1F1B). Throws
/// sdk::Error naming `schedule`, the rank and the pass when an order is malformed or would wait forever.
double check_pipeline_orders(const std::vector<std::vector<sdk::PipelinePass>>& orders, int chunks, int micro_batches,
                             const std::string& schedule);

}  // namespace kforge::train
