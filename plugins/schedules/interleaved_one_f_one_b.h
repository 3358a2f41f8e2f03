// Interleaved 1F1B (Megatron-LM): each rank holds several model chunks (virtual stages), which shrinks the bubble by
// that factor at the cost of more transfers.
#pragma once

#include <kforge/sdk/pipeline_schedule.h>

namespace kforge::builtin::schedules {

class InterleavedOneFOneB final : public sdk::PipelineSchedule {
 public:
  /// More chunks per rank than any model has blocks.
  static constexpr int kMaxVirtualStages = 1024;
  /// 1 <= `virtual_stages` <= kMaxVirtualStages chunks per rank ([distributed] virtual_stages).
  explicit InterleavedOneFOneB(int virtual_stages);
  int chunks() const override { return virtual_stages_; }
  /// Micro-batches go through the chunks in groups of `ranks` (so their count must be a multiple of ranks): the k-th
  /// forward of a rank is chunk (k / ranks) mod chunks of micro-batch (k / (ranks x chunks)) x ranks + k mod ranks, its
  /// k-th backward the same in reverse chunk order; rank r first runs 2 (ranks - 1 - r) + (chunks - 1) ranks forwards,
  /// then one forward and one backward in turn.
  std::vector<sdk::PipelinePass> order(int ranks, int rank, int micro_batches) const override;

 private:
  int virtual_stages_;
};

}  // namespace kforge::builtin::schedules
