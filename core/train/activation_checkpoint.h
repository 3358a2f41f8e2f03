// Activation checkpointing ([train] activation_checkpointing): each block ("full") or each sub-module a model
// declares checkpointable ("selective") runs its forward without keeping activations, keeps only its input, and
// runs again in the backward to backpropagate the incoming gradient (LibTorch has no torch.utils.checkpoint).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kforge/sdk/model.h"

namespace kforge::train {

enum class CheckpointMode { none, full, selective };

/// "none" | "full" | "selective" (the schema refuses other values naming key, file and line).
CheckpointMode checkpoint_mode(const std::string& value);

class ActivationCheckpointing {
 public:
  /// "full": wraps the block runner installed now (FSDP's or data parallelism's, which keep gathering and
  /// reducing once per block per backward around the recomputation); "selective": installs the module runner
  /// for the modules of blocks()' `checkpointable` lists. Throws sdk::ConfigError naming
  /// [train] activation_checkpointing when the model has no such unit. Restores the runners when destroyed.
  ActivationCheckpointing(sdk::Model& model, CheckpointMode mode);
  ~ActivationCheckpointing();
  ActivationCheckpointing(const ActivationCheckpointing&) = delete;
  ActivationCheckpointing& operator=(const ActivationCheckpointing&) = delete;

  /// Recomputations run so far (one per unit per backward that reached it).
  int64_t recomputations() const { return recomputations_; }

  /// What one checkpointed unit reads and may change in place.
  struct Unit {
    std::string name;                 ///< "layers.0" or "layers.0.attention"
    std::vector<std::string> names;   ///< of `tensors`
    std::vector<at::Tensor> tensors;  ///< its parameters, then its buffers
    size_t num_params = 0;
    /// Indices of `tensors` its forward changes in place (e.g. a router's balancing bias), learnt on its
    /// first forward, which keeps a copy of every tensor.
    std::optional<std::vector<size_t>> mutated;
  };

 private:
  /// fn(input) without keeping activations, recomputed in the backward.
  at::Tensor run(Unit& unit, const at::Tensor& input, const sdk::Model::BlockFn& fn);

  sdk::Model& model_;
  CheckpointMode mode_;
  sdk::Model::BlockRunner wrapped_;                         ///< the block runner installed before ("full")
  std::vector<Unit> blocks_;                                ///< "full": by block index
  std::map<std::pair<size_t, std::string>, Unit> modules_;  ///< "selective": by (block, module)
  int64_t recomputations_ = 0;
};

}  // namespace kforge::train
