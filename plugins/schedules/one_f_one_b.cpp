// 1F1B's order.
#include "one_f_one_b.h"

#include <algorithm>

#include "micro_batch_check.h"

namespace kforge::builtin::schedules {

std::vector<sdk::PipelinePass> OneFOneB::order(int ranks, int rank, int micro_batches) const {
  check_micro_batches("1f1b", ranks, micro_batches, /*at_least_ranks=*/true, /*multiple_of_ranks=*/false);
  const int warmup = std::min(ranks - 1 - rank, micro_batches);
  std::vector<sdk::PipelinePass> out;
  int forward = 0, backward = 0;
  while (forward < warmup) out.push_back({true, 0, forward++});
  while (forward < micro_batches) {
    out.push_back({true, 0, forward++});
    out.push_back({false, 0, backward++});
  }
  while (backward < micro_batches) out.push_back({false, 0, backward++});
  return out;
}

}  // namespace kforge::builtin::schedules
