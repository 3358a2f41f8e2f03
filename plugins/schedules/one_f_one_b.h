// 1F1B (PipeDream-flush): warm-up forwards, then one forward and one backward in turn, then the last backwards.
#pragma once

#include <kforge/sdk/pipeline_schedule.h>

namespace kforge::builtin::schedules {

class OneFOneB final : public sdk::PipelineSchedule {
 public:
  int chunks() const override { return 1; }
  /// Rank r runs pp - 1 - r forwards first, so it holds at most pp - r micro-batches' activations; needs
  /// micro_batches >= ranks.
  std::vector<sdk::PipelinePass> order(int ranks, int rank, int micro_batches) const override;
};

}  // namespace kforge::builtin::schedules
