// ParallelModel: how a run spreads its model over the ranks, chosen when the run is built: the model whole on each
// rank (PlainParallel: one process or replicated data parallelism), fully sharded (ShardedParallel: FSDP, HSDP), and
// the wrappers that compose over them (GroupParallel: expert and tensor parallelism; PipelineParallel: a pipeline
// stage). It owns the step's forward and gradient synchronisation, the gradient norm over the ranks that hold the
// parameters, and its checkpoint view: what this rank writes and which part of a checkpoint it loads.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "checkpoint/snapshot.h"
#include "config/job_config.h"
#include "data/batch.h"
#include "dist/device_mesh.h"
#include "kforge/sdk/hook.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/optimizer.h"
#include "parallel/group_sharding.h"
#include "parallel/step_host.h"
#include "parallel/step_result.h"
#include "plugins/components.h"

namespace kforge::parallel {

/// What the wrappers add to a global gradient norm: the groups over which they split some parameters (each of those
/// counts once per rank of its group), and the pipeline's stages (each holds other parameters).
struct NormScope {
  std::vector<const GroupSharding*> shardings;
  const dist::Group* stages = nullptr;
  bool empty() const { return shardings.empty() && stages == nullptr; }
};

/// A step body a parallelism brings (ParallelModel::own_step).
using OwnStepFn = std::function<StepResult(StepHost& trainer, const std::vector<data::Batch>& micro_batches)>;

/// Receives a logged step's metrics.
using MetricSink = std::function<void(const sdk::MetricList&)>;

class ParallelModel {
 public:
  virtual ~ParallelModel() = default;

  /// What the optimizer updates: the model's trainable parameters, or this rank's shards of them (FSDP).
  virtual const std::vector<sdk::NamedParameter>& parameters() const = 0;
  /// The model's forward as a step runs it (FSDP: the root parameters gathered).
  virtual at::Tensor forward(const at::Tensor& tokens) = 0;
  /// After the step's last backward: every gradient averaged over the data-parallel ranks.
  virtual void sync_gradients() = 0;
  /// Drops parameters()' gradients.
  virtual void zero_grad() = 0;
  /// Global-norm clipping of parameters()' gradients to `max_norm` over every rank that holds a part of the model;
  /// returns the norm before clipping.
  double clip_gradients(double max_norm) { return clip_scoped(max_norm, NormScope{}); }
  /// clip_gradients() with the wrappers' `scope` (a wrapper adds its own and hands it inwards).
  virtual double clip_scoped(double max_norm, const NormScope& scope) = 0;
  /// The [optimizer] over parameters().
  virtual std::unique_ptr<sdk::Optimizer> make_optimizer(const config::JobConfig& job,
                                                         const plugins::Components& components) const;
  /// The step body this parallelism trains with instead of the run's (a pipeline stage's own), else empty; `custom`:
  /// whether the run brings its own (TrainingOptions::step_fn), which such a parallelism refuses.
  virtual OwnStepFn own_step(bool /*custom*/) const { return {}; }
  /// `batch`'s loss for evaluation (gradients as the caller's mode): its documents and images set on the trainer's
  /// model, then trainer.forward() and the loss; a pipeline stage's through every stage.
  virtual double eval_loss(StepHost& trainer, const data::Batch& batch);
  /// The step's parallelism metrics to `sink` on a `logged` step (their counters restart either way); none by default.
  virtual void log_step_metrics(bool /*logged*/, const MetricSink& /*sink*/) {}

  /// Writes this rank's part of the parameters and the optimizer state into `s` (as the wrappers trim it).
  virtual void save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const = 0;
  /// Then the tensors every rank of a stage holds whole (buffers), from the stage's first rank.
  virtual void save_whole(checkpoint::Snapshot& s) const = 0;
  /// A loaded snapshot of whole tensors -> the part this rank holds; nullopt when that is all of it.
  virtual std::optional<checkpoint::Snapshot> localise(const checkpoint::Snapshot& /*whole*/) const {
    return std::nullopt;
  }
  /// Loads localise()'s model tensors, with checkpoint::load_model_weights' checks.
  virtual void load_weights(const checkpoint::Snapshot& s) = 0;
  /// localise()'s optimizer state -> what the optimizer over parameters() loads.
  virtual checkpoint::TensorMap optimizer_state(const checkpoint::TensorMap& state) const { return state; }
};

/// A zero gradient for every parameter of `params` that trains and has none.
void fill_missing_grads(const std::vector<sdk::NamedParameter>& params);

/// Whether this rank is its pipeline stage's first (every other coordinate of `mesh` 0): the one that writes what
/// every rank of the stage holds whole.
bool stage_leader(const dist::DeviceMesh& mesh);

/// `model`'s buffers into `s`'s model tensors.
void save_buffers(const sdk::Model& model, checkpoint::Snapshot& s);

}  // namespace kforge::parallel
