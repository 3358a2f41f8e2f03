// GPipe: every micro-batch's forward, then every backward (one chunk per rank).
#pragma once

#include <kforge/sdk/pipeline_schedule.h>

namespace kforge::builtin::schedules {

class GPipe final : public sdk::PipelineSchedule {
 public:
  int chunks() const override { return 1; }
  /// F0 F1 ... F(m-1), then B0 B1 ... B(m-1): the most activations held (all m), the simplest order.
  std::vector<sdk::PipelinePass> order(int ranks, int rank, int micro_batches) const override;
};

}  // namespace kforge::builtin::schedules
