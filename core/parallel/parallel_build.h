// Building a run's ParallelModel from [distributed]: the pipeline stage (pp), the expert and tensor shardings (ep,
// tp) and the data parallelism under them (FSDP over dp_shard, else replicated over dp, else one process).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "dist/expert_group.h"
#include "dist/runtime.h"
#include "dist/tensor_group.h"
#include "parallel/parallel_model.h"
#include "parallel/pipeline.h"
#include "parallel/stage_model.h"
#include "plugins/components.h"

namespace kforge::parallel {

/// [distributed] pp > 1: this rank's part of the model and the pipeline that runs it.
struct PipelineStages {
  std::shared_ptr<StageModel> stage;
  std::unique_ptr<Pipeline> pipeline;
};

/// Splits `whole` (built alike on every rank) into [distributed] pp stages by the [distributed] pp_schedule's chunks
/// and pp_layer_split; logs the layout.
PipelineStages split_into_stages(const config::JobConfig& job, const plugins::Components& components,
                                 const dist::Runtime& runtime, std::shared_ptr<sdk::Model> whole);

/// What build_parallel_model() composes.
struct ParallelInputs {
  sdk::Model& model;                               ///< the model, or this rank's stage of it (stages.stage)
  const std::vector<sdk::NamedParameter>& params;  ///< its trainable parameters
  PipelineStages stages;                           ///< [distributed] pp > 1, else empty
  dist::ExpertGroup* experts = nullptr;            ///< [distributed] ep > 1, else null
  dist::TensorGroup* tensors = nullptr;            ///< [distributed] tp > 1, else null
  std::set<std::string> whole;                     ///< parameters FSDP holds whole (a vision encoder frozen all run)
};

/// The data parallelism of `in.model` (dp_shard > 1: FSDP; several data-parallel ranks: replicated; else one process),
/// wrapped in expert, tensor and pipeline parallelism when configured; logs what this rank holds. The model, groups
/// and `runtime` must outlive the result. Throws sdk::Error when a model that ep or tp splits holds no slice of its
/// own.
std::unique_ptr<ParallelModel> build_parallel_model(const config::JobConfig& job, const dist::Runtime& runtime,
                                                    ParallelInputs in);

}  // namespace kforge::parallel
