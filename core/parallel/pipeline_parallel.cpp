// PipelineParallel: a pipeline stage's step, norm, metric and checkpoint view over the model inside.
#include "parallel/pipeline_parallel.h"

#include <ATen/ATen.h>

#include "kforge/sdk/error.h"

namespace kforge::parallel {

PipelineParallel::PipelineParallel(std::unique_ptr<ParallelModel> inner, StageModel& stage,
                                   std::unique_ptr<Pipeline> pipeline, const dist::Group& pp)
    : ParallelWrapper(std::move(inner)), stage_(stage), pipeline_(std::move(pipeline)), pp_(pp) {}

double PipelineParallel::clip_scoped(double max_norm, const NormScope& scope) {
  NormScope mine = scope;
  mine.stages = &pp_;
  return inner_->clip_scoped(max_norm, mine);
}

OwnStepFn PipelineParallel::own_step(bool custom) const {
  if (custom) {
    throw sdk::ConfigError(
        "[distributed] pp > 1 trains with kforge's pipeline step body: a custom step body (TrainingOptions::step_fn) "
        "cannot run on pipeline stages; use pp = 1");
  }
  Pipeline* pipeline = pipeline_.get();
  return [pipeline](StepHost& trainer, const std::vector<data::Batch>& micro_batches) {
    return pipeline->run(trainer, micro_batches);
  };
}

void PipelineParallel::log_step_metrics(bool logged, const MetricSink& sink) {
  inner_->log_step_metrics(logged, sink);
  const double idle_fraction = pipeline_->take_idle_fraction();
  if (!logged) return;
  at::Tensor idle = at::tensor({idle_fraction}, at::kDouble);
  pp_.all_reduce(idle);
  sink({{"pp/bubble", idle.item<double>() / pp_.size()}});
}

void PipelineParallel::save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const {
  inner_->save_slices(s, optimizer);
  stage_.trim(s);
}

std::optional<checkpoint::Snapshot> PipelineParallel::localise(const checkpoint::Snapshot& whole) const {
  return localise_within(stage_.localise(whole));
}

}  // namespace kforge::parallel
