// Pipeline orders: checks a schedule's per-rank orders before the first step, and what bubble they leave.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kforge/sdk/pipeline_schedule.h"

namespace kforge::parallel {

/// Most passes (forwards and backwards) the orders of one step may hold over all ranks: 2 x pp x chunks x
/// micro-batches. Far above a real pipeline's (pp = 128 ranks x 8 chunks x 8,192 micro-batches reach it); the orders
/// and their check then take a few hundred MB.
inline constexpr int64_t kMaxPipelinePasses = int64_t{1} << 24;

/// Checks the size of the orders before any is built: `ranks` ([distributed] pp) x `chunks` per rank x
/// `micro_batches` ([train] grad_accum_steps) x 2 passes at most kMaxPipelinePasses, and `chunks` >= 1. Throws
/// sdk::ConfigError naming those keys, their values and `schedule`.
void check_pipeline_size(int64_t ranks, int chunks, int64_t micro_batches, const std::string& schedule);

/// Checks `orders` (one per rank, as sdk::PipelineSchedule::order gives them for `micro_batches`, each rank holding
/// `chunks` chunks): every (chunk, micro-batch) runs its forward once and then its backward once; and runs them all
/// with a forward costing 1 and a backward 2, sends that never wait and receives that do. Returns the bubble: the
/// fraction of ranks x the whole time that ranks sit idle ((pp - 1) / (m + pp - 1) for GPipe and 1F1B). Throws
/// sdk::Error naming `schedule`, the rank and the pass when an order is malformed or would wait forever.
double check_pipeline_orders(const std::vector<std::vector<sdk::PipelinePass>>& orders, int chunks, int micro_batches,
                             const std::string& schedule);

}  // namespace kforge::parallel
