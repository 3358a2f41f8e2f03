// PipelineParallel: this rank's pipeline stage ([distributed] pp > 1) over the data parallelism inside it: the
// pipeline's step body and evaluation, the gradient norm summed over the stages, each stage's checkpoint part, and
// the bubble metric.
#pragma once

#include <memory>

#include "parallel/parallel_wrapper.h"
#include "parallel/pipeline.h"
#include "parallel/stage_model.h"

namespace kforge::parallel {

class PipelineParallel final : public ParallelWrapper {
 public:
  /// `stage` (this rank's part of the model) and `pp` (the group of its stages) must outlive this object.
  PipelineParallel(std::unique_ptr<ParallelModel> inner, StageModel& stage, std::unique_ptr<Pipeline> pipeline,
                   const dist::Group& pp);

  double clip_scoped(double max_norm, const NormScope& scope) override;
  /// The pipeline's step (Pipeline::run); throws sdk::ConfigError for a `custom` one, which cannot run on stages.
  OwnStepFn own_step(bool custom) const override;
  /// Through every stage: the last stage's loss, on every rank (Pipeline::evaluate).
  double eval_loss(StepHost& trainer, const data::Batch& batch) override { return pipeline_->evaluate(trainer, batch); }
  /// pp/bubble: the share of the steps since the last log the stages spent waiting for each other (collective).
  void log_step_metrics(bool logged, const MetricSink& sink) override;
  /// Each stage writes its own parameters' state.
  void save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const override;
  std::optional<checkpoint::Snapshot> localise(const checkpoint::Snapshot& whole) const override;

 private:
  StageModel& stage_;
  std::unique_ptr<Pipeline> pipeline_;
  const dist::Group& pp_;
};

}  // namespace kforge::parallel
