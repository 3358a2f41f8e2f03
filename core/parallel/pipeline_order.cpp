// check_pipeline_orders: well-formed, deadlock-free, and the bubble.
#include "parallel/pipeline_order.h"

#include <fmt/format.h>

#include <algorithm>

#include "kforge/sdk/error.h"

namespace kforge::parallel {
namespace {

std::string describe(const sdk::PipelinePass& p) {
  return fmt::format("{} of micro-batch {} on chunk {}", p.forward ? "forward" : "backward", p.micro_batch, p.chunk);
}

}  // namespace

void check_pipeline_size(int64_t ranks, int chunks, int64_t micro_batches, const std::string& schedule) {
  if (chunks < 1) {
    throw sdk::ConfigError(fmt::format("pipeline schedule \"{}\" ([distributed] pp_schedule) holds {} model chunks per "
                                       "rank; a schedule needs at least one (fix or replace its plugin)",
                                       schedule, chunks));
  }
  // In double: the product of three values up to 2^31 does not fit an int64, and is only compared.
  const double passes = 2.0 * static_cast<double>(ranks) * chunks * static_cast<double>(micro_batches);
  if (passes > static_cast<double>(kMaxPipelinePasses)) {
    throw sdk::ConfigError(fmt::format(
        "[distributed] pp = {} x {} model chunks per rank (pp_schedule \"{}\") x [train] grad_accum_steps = {} "
        "micro-batches: {:.0f} forward and backward passes per step, more than the {} a step may hold; lower pp or "
        "grad_accum_steps",
        ranks, chunks, schedule, micro_batches, passes, kMaxPipelinePasses));
  }
}

double check_pipeline_orders(const std::vector<std::vector<sdk::PipelinePass>>& orders, int chunks, int micro_batches,
                             const std::string& schedule) {
  const int ranks = static_cast<int>(orders.size());
  const int stages = ranks * chunks;
  auto fail = [&](int rank, const std::string& what) {
    throw sdk::Error(fmt::format("pipeline schedule \"{}\" ([distributed] pp_schedule), rank {} of {}: {}", schedule,
                                 rank, ranks, what));
  };
  // Well-formed: each (chunk, micro-batch) forward once, then its backward once.
  for (int r = 0; r < ranks; ++r) {
    std::vector<int> seen(static_cast<size_t>(chunks * micro_batches), 0);  // 0 none, 1 forward, 2 both
    for (const sdk::PipelinePass& p : orders[r]) {
      if (p.chunk < 0 || p.chunk >= chunks || p.micro_batch < 0 || p.micro_batch >= micro_batches) {
        fail(r, fmt::format("{} is out of range ({} chunks, {} micro-batches)", describe(p), chunks, micro_batches));
      }
      int& state = seen[static_cast<size_t>(p.chunk * micro_batches + p.micro_batch)];
      if (state != (p.forward ? 0 : 1))
        fail(r, describe(p) + (p.forward ? " runs twice" : " is not after its forward"));
      state = p.forward ? 1 : 2;
    }
    for (size_t k = 0; k < seen.size(); ++k) {
      if (seen[k] != 2) {
        fail(r, fmt::format("micro-batch {} on chunk {} never runs its {}", static_cast<int>(k) % micro_batches,
                            static_cast<int>(k) / micro_batches, seen[k] == 0 ? "forward" : "backward"));
      }
    }
  }
  // Run them: a pass starts when its rank is free and its input has arrived.
  const size_t cells = static_cast<size_t>(stages * micro_batches);
  std::vector<double> forward_done(cells, -1), backward_done(cells, -1);
  std::vector<size_t> next(static_cast<size_t>(ranks), 0);
  std::vector<double> free_at(static_cast<size_t>(ranks), 0);
  double busy = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < ranks; ++r) {
      for (size_t& k = next[static_cast<size_t>(r)]; k < orders[r].size(); ++k) {
        const sdk::PipelinePass& p = orders[r][k];
        const int v = p.chunk * ranks + r;
        const auto cell = [&](int stage) { return static_cast<size_t>(stage * micro_batches + p.micro_batch); };
        double ready = 0;
        if (p.forward && v > 0) ready = forward_done[cell(v - 1)];
        if (!p.forward) ready = v + 1 < stages ? backward_done[cell(v + 1)] : forward_done[cell(v)];
        if (ready < 0) break;  // waits for another rank
        const double cost = p.forward ? 1 : 2;
        double& at = free_at[static_cast<size_t>(r)];
        at = std::max(at, ready) + cost;
        (p.forward ? forward_done : backward_done)[cell(v)] = at;
        busy += cost;
        progress = true;
      }
    }
  }
  for (int r = 0; r < ranks; ++r) {
    const size_t k = next[static_cast<size_t>(r)];
    if (k < orders[r].size()) {
      fail(r, fmt::format("its {} waits forever (on a pass that waits on it); the schedule deadlocks with {} "
                          "micro-batches",
                          describe(orders[r][k]), micro_batches));
    }
  }
  const double span = *std::max_element(free_at.begin(), free_at.end());
  return span > 0 ? 1.0 - busy / (span * ranks) : 0.0;
}

}  // namespace kforge::parallel
