// Interleaved 1F1B's order.
#include "interleaved_one_f_one_b.h"

#include <kforge/sdk/error.h>

#include <algorithm>
#include <string>

#include "micro_batch_check.h"

namespace kforge::builtin::schedules {

InterleavedOneFOneB::InterleavedOneFOneB(int virtual_stages) : virtual_stages_(virtual_stages) {
  if (virtual_stages < 1 || virtual_stages > kMaxVirtualStages) {
    throw sdk::ConfigError("[distributed] virtual_stages = " + std::to_string(virtual_stages) +
                           ": interleaved_1f1b needs between 1 and " + std::to_string(kMaxVirtualStages) +
                           " model chunks per rank (each chunk holds at least one block)");
  }
}

std::vector<sdk::PipelinePass> InterleavedOneFOneB::order(int ranks, int rank, int micro_batches) const {
  check_micro_batches("interleaved_1f1b", ranks, micro_batches, /*at_least_ranks=*/true, /*multiple_of_ranks=*/true);
  const int chunks = virtual_stages_;
  const int total = micro_batches * chunks;
  auto micro = [&](int k) { return (k / (ranks * chunks)) * ranks + k % ranks; };
  auto pass = [&](int k, bool forward) {
    const int chunk = (k / ranks) % chunks;
    return sdk::PipelinePass{forward, forward ? chunk : chunks - 1 - chunk, micro(k)};
  };
  const int warmup = micro_batches == ranks ? total : std::min(2 * (ranks - 1 - rank) + (chunks - 1) * ranks, total);
  std::vector<sdk::PipelinePass> out;
  int forward = 0, backward = 0;
  while (forward < warmup) out.push_back(pass(forward++, true));
  while (forward < total) {
    out.push_back(pass(forward++, true));
    out.push_back(pass(backward++, false));
  }
  while (backward < total) out.push_back(pass(backward++, false));
  return out;
}

}  // namespace kforge::builtin::schedules
