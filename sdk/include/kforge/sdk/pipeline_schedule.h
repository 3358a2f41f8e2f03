// PipelineSchedule: the order in which a pipeline-parallel rank ([distributed] pp > 1) runs the forward and backward
// passes of its model chunks over one optimizer step's micro-batches ([distributed] pp_schedule selects it).
#pragma once

#include <vector>

namespace kforge::sdk {

/// One pass of one micro-batch through one of this rank's model chunks.
struct PipelinePass {
  bool forward = true;  ///< false: the backward
  int chunk = 0;        ///< this rank's chunk: virtual stage chunk * ranks + rank
  int micro_batch = 0;
};

/// The host splits the model's blocks into ranks x chunks() virtual stages, in order; rank r holds virtual stages
/// r, r + ranks, r + 2 ranks, ... (its chunks 0, 1, 2, ...). A virtual stage's forward of a micro-batch waits for the
/// previous virtual stage's output of it, and its backward for the next one's input gradient (the last one's backward
/// follows its own forward). The host sends outputs and gradients without waiting and runs every rank's order as
/// given, so an order must never wait on a pass that waits on it; the host checks every rank's order before the
/// first step and measures its bubble.
class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  /// Model chunks (virtual stages) per rank: 1 for one contiguous stage per rank.
  virtual int chunks() const = 0;
  /// Rank `rank` of `ranks`: each (chunk, micro-batch) forward once and backward once, the backward after the forward,
  /// over `micro_batches` micro-batches. Throws sdk::ConfigError naming the keys when it cannot order that many
  /// (e.g. fewer micro-batches than ranks).
  virtual std::vector<PipelinePass> order(int ranks, int rank, int micro_batches) const = 0;
};

}  // namespace kforge::sdk
