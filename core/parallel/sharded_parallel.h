// ShardedParallel: data parallelism with the parameters, gradients and optimizer state sharded over dp_shard
// (FullyShardedModel: FSDP, HSDP with dp_replicate).
#pragma once

#include <memory>

#include "dist/device_mesh.h"
#include "parallel/fully_sharded.h"
#include "parallel/parallel_model.h"

namespace kforge::parallel {

class ShardedParallel final : public ParallelModel {
 public:
  /// `fsdp` shards `model` over `mesh`'s dp_shard; `model` and `mesh` must outlive this object.
  ShardedParallel(sdk::Model& model, const dist::DeviceMesh& mesh, std::unique_ptr<FullyShardedModel> fsdp);

  const std::vector<sdk::NamedParameter>& parameters() const override { return fsdp_->shards(); }
  at::Tensor forward(const at::Tensor& tokens) override { return fsdp_->forward(tokens); }
  void sync_gradients() override { fsdp_->finish_backward(); }
  void zero_grad() override { fsdp_->zero_grad(); }
  /// The shards' norm over dp_shard; with a scope, clip_sharded over it.
  double clip_scoped(double max_norm, const NormScope& scope) override;
  /// An optimizer that needs whole matrices (it declares KFORGE_CAP_NEEDS_WHOLE_MATRICES) updates whole copies of the
  /// shards (WholeMatrixOptimizer).
  std::unique_ptr<sdk::Optimizer> make_optimizer(const config::JobConfig& job,
                                                 const plugins::Components& components) const override;
  /// Each shard rank of the first replica writes its slices, with their placements; the optimizer's whole entries
  /// (step counters) from shard rank 0 only.
  void save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const override;
  /// The buffers and the parameters held whole, from the stage's first rank.
  void save_whole(checkpoint::Snapshot& s) const override;
  void load_weights(const checkpoint::Snapshot& s) override { fsdp_->load_model_weights(s); }
  checkpoint::TensorMap optimizer_state(const checkpoint::TensorMap& state) const override {
    return fsdp_->shard_optimizer_state(state);
  }

 private:
  sdk::Model& model_;
  const dist::DeviceMesh& mesh_;
  std::unique_ptr<FullyShardedModel> fsdp_;
};

}  // namespace kforge::parallel
