// PlainParallel: the model whole on every rank: one process, or data parallelism over dp whose gradient all-reduce
// overlaps the backward (ReplicatedModel).
#pragma once

#include <memory>
#include <vector>

#include "dist/device_mesh.h"
#include "parallel/parallel_model.h"
#include "parallel/replicated_model.h"

namespace kforge::parallel {

class PlainParallel final : public ParallelModel {
 public:
  /// `params`: `model`'s trainable parameters; `replicated`: its data parallelism over `dp` (null in one process).
  /// `model`, `mesh` and `dp` are held by reference and must outlive this object.
  PlainParallel(sdk::Model& model, std::vector<sdk::NamedParameter> params, const dist::DeviceMesh& mesh,
                const dist::Group& dp, std::unique_ptr<ReplicatedModel> replicated);

  const std::vector<sdk::NamedParameter>& parameters() const override { return params_; }
  at::Tensor forward(const at::Tensor& tokens) override;
  /// A zero gradient for every trained parameter none reached, then the overlapped all-reduce finished.
  void sync_gradients() override;
  /// Dropped, not zeroed: the next backward then stores each parameter's first gradient as it comes instead of
  /// filling zeros and adding to them (two passes over every gradient saved).
  void zero_grad() override;
  /// torch's clip_grad_norm_; with a scope, clip_sharded over it.
  double clip_scoped(double max_norm, const NormScope& scope) override;
  /// The parameters and optimizer state, from the data-parallel group's rank 0 (the ranks hold the same).
  void save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const override;
  void save_whole(checkpoint::Snapshot& s) const override;
  void load_weights(const checkpoint::Snapshot& s) override;

 private:
  sdk::Model& model_;
  std::vector<sdk::NamedParameter> params_;
  const dist::DeviceMesh& mesh_;
  const dist::Group& dp_;
  std::unique_ptr<ReplicatedModel> replicated_;
};

}  // namespace kforge::parallel
