// GPipe's order.
#include "gpipe.h"

#include "micro_batch_check.h"

namespace kforge::builtin::schedules {

std::vector<sdk::PipelinePass> GPipe::order(int ranks, int rank, int micro_batches) const {
  (void)rank;
  check_micro_batches("gpipe", ranks, micro_batches, /*at_least_ranks=*/false, /*multiple_of_ranks=*/false);
  std::vector<sdk::PipelinePass> out;
  for (int m = 0; m < micro_batches; ++m) out.push_back({true, 0, m});
  for (int m = 0; m < micro_batches; ++m) out.push_back({false, 0, m});
  return out;
}

}  // namespace kforge::builtin::schedules
