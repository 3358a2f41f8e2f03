// Pipeline: one pipeline-parallel rank's step ([distributed] pp > 1): the schedule's order of forward and backward
// passes over the step's micro-batches, the transfers between stages, and the loss, computed on the last stage and
// shared with every stage.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/batch.h"
#include "dist/group.h"
#include "kforge/sdk/pipeline_schedule.h"
#include "parallel/stage_link.h"
#include "parallel/stage_model.h"
#include "parallel/step_host.h"
#include "parallel/step_result.h"

namespace kforge::parallel {

class Pipeline {
 public:
  /// `stage` is this rank's part of the model, `pp` the group of its stages (both held by reference); `schedule`
  /// (named `name` in messages) orders `micro_batches` per step. Checks every rank's order (check_pipeline_orders).
  Pipeline(StageModel& stage, const dist::Group& pp, std::unique_ptr<sdk::PipelineSchedule> schedule, std::string name,
           int micro_batches);
  Pipeline(StageModel&, dist::Group&&, std::unique_ptr<sdk::PipelineSchedule>, std::string, int) = delete;

  /// Model chunks (virtual stages) per rank.
  int chunks() const { return chunks_; }
  /// The idle fraction the order leaves in theory (forward 1, backward 2).
  double planned_bubble() const { return planned_bubble_; }
  /// One step's passes on `trainer`'s model and loss, then the data-parallel gradient sync and the clipping over every
  /// stage: the standard step's result (loss and row losses from the last stage, on every rank).
  StepResult run(StepHost& trainer, const std::vector<data::Batch>& micro_batches);
  /// `batch`'s forward through every stage, as the trainer's forward (no autocast; gradients as the caller's mode):
  /// the last stage's loss, on every rank (evaluation).
  double evaluate(StepHost& trainer, const data::Batch& batch);
  /// The fraction of the steps since the last call this rank spent waiting for other stages.
  double take_idle_fraction();

 private:
  StageModel& stage_;
  const dist::Group& group_;
  std::unique_ptr<sdk::PipelineSchedule> schedule_;
  std::string name_;
  int chunks_;
  std::vector<sdk::PipelinePass> order_;  ///< this rank's, for the configured micro-batches
  double planned_bubble_ = 0;
  StageLink link_;
  double busy_seconds_ = 0;
};

}  // namespace kforge::parallel
