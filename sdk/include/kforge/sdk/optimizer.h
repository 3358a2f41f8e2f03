// Optimizer: updates named parameters; its state is keyed by parameter name, never by position.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace kforge::sdk {

struct NamedParameter {
  std::string name;  ///< fully-qualified name, e.g. "layers.0.attention.q_proj.weight"
  at::Tensor tensor;
};

/// Ordered name -> tensor map; scalars are 0-d tensors.
using StateDict = std::map<std::string, at::Tensor>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// One update from the current .grad of each parameter; parameters without a grad are skipped.
  virtual void step() = 0;
  /// LambdaLR semantics: every group's lr becomes its base lr times factor.
  virtual void set_lr_factor(double factor) = 0;
  /// The current (primary) learning rate, for logging.
  virtual double lr() const = 0;
  /// Entries named "<param name>.<slot>" plus global ones; enough to resume bit-exactly.
  virtual StateDict state_dict() const = 0;
  /// Restores state_dict(); throws kforge::sdk::Error naming a missing or mis-shaped entry.
  virtual void load_state_dict(const StateDict& state) = 0;

  /// Optimizers that evaluate at other weights than they train at (Schedule-Free) swap them here.
  /// The host calls use_eval_weights() before evaluation and before taking state_dict() for a
  /// checkpoint (so checkpoints hold the evaluation weights), and use_train_weights() after both
  /// and after load_state_dict(). Both are idempotent; the default does nothing.
  virtual void use_eval_weights() {}
  virtual void use_train_weights() {}
};

}  // namespace kforge::sdk
