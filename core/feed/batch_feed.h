// BatchFeed and BatchSource: where a run's batches come from. A training feed (one dataset's windows, packed or not; a
// mixture; image-text or video samples) gives each step's micro-batches and keeps its position in the checkpoint; an
// evaluation source gives batches one at a time from the start of its order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "data/batch.h"
#include "kforge/sdk/hook.h"

namespace kforge::feed {

class BatchFeed {
 public:
  virtual ~BatchFeed() = default;

  /// The step's micro-batches for this rank ([train] grad_accum_steps of them), on the host; none when a shutdown
  /// signal came while they were read (the feed is then back at the step's first sample). `logged`: the step's metrics
  /// are logged (a mixture's rows then carry their sources, for step_metrics()).
  virtual std::vector<data::Batch> micro_batches(int64_t step, bool logged) = 0;
  /// The learning-rate multiplier at `step` (a mixture phase's lr_scale); 1 for the other feeds.
  virtual double lr_scale(int64_t /*step*/) const { return 1.0; }
  /// The data metrics of a logged step's `batches` (`row_losses`: the step body's, for a mixture's loss/<source>);
  /// collective over the data-parallel ranks where non-empty; none by default.
  virtual sdk::MetricList step_metrics(const std::vector<data::Batch>& /*batches*/,
                                       const std::vector<at::Tensor>& /*row_losses*/) {
    return {};
  }
  /// Writes this rank's position into `entry`, its entry of train_state.data ("epoch" and "batches_yielded", and the
  /// feed's own fields), and what every rank shares into `train_state`; `steps_drawn`: the steps whose batches were
  /// read, trained or skipped.
  virtual void save_position(nlohmann::json& entry, nlohmann::json& train_state, int64_t steps_drawn) const = 0;
  /// Continues where a checkpoint's `train_state` (of step `step`) left off, re-deriving this rank's position when the
  /// data-parallel size changed. Throws sdk::Error when the position cannot be continued here.
  virtual void resume(const nlohmann::json& train_state, int64_t step) = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// The next batch of this rank's order, on the host.
  virtual data::Batch next_batch() = 0;
  /// Back to the start of this rank's order (where each evaluation starts).
  virtual void rewind() = 0;
};

}  // namespace kforge::feed
