// WholeMatrixOptimizer: an optimizer that needs whole matrices (Muon orthogonalises each one) run
// on FSDP row shards. Every rank of the shard group gathers each parameter and its gradient whole,
// runs the same update on the same whole tensors and keeps its own rows; the optimizer's state is
// whole on every rank (replicated, not sharded) and is checkpointed as row slices, as FSDP writes
// a sharded optimizer's, so checkpoints move between this and any other rank layout.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kforge/sdk/optimizer.h"
#include "parallel/fully_sharded.h"

namespace kforge::parallel {

class WholeMatrixOptimizer final : public sdk::Optimizer {
 public:
  using Factory = std::function<std::unique_ptr<sdk::Optimizer>(std::vector<sdk::NamedParameter>)>;

  /// Builds the optimizer with `make` over whole copies of `fsdp`'s shards (gathered: collective,
  /// as are step(), load_state_dict() and the weight swaps). `fsdp` must outlive this object.
  WholeMatrixOptimizer(const FullyShardedModel& fsdp, const Factory& make);

  /// Gathers the parameters and their gradients, steps on them and writes this rank's rows back.
  void step() override;
  void set_lr_factor(double factor) override { inner_->set_lr_factor(factor); }
  double lr() const override { return inner_->lr(); }
  /// The optimizer's state with each entry shaped like its parameter cut to this rank's rows.
  sdk::StateDict state_dict() const override;
  /// Gathers the row-sliced entries of `state` (as state_dict() gives them) and loads them whole.
  void load_state_dict(const sdk::StateDict& state) override;
  void use_eval_weights() override;
  void use_train_weights() override;

 private:
  /// Gathers the shards into the whole parameters, runs `fn`, and copies this rank's rows of every
  /// whole parameter `fn` changed back into its shard.
  void on_whole_parameters(const std::function<void()>& fn);
  /// The index of the parameter whose whole rows state entry `key` = `t` holds, if it is shaped like it.
  std::optional<size_t> row_sliced(const std::string& key, const at::Tensor& t) const;

  const FullyShardedModel& fsdp_;
  std::vector<sdk::NamedParameter> whole_;  ///< one per fsdp_.shards() entry, in its order
  std::unique_ptr<sdk::Optimizer> inner_;
};

}  // namespace kforge::parallel
