// PerParamOptimizer: base for optimizers whose state is a few named tensors per parameter plus a step count.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "kforge/sdk/optimizer.h"
#include "kforge/sdk/param_groups.h"

namespace kforge::builtin::optimizers {

struct SlotSpec {
  std::string name;     ///< state entry "<param>.<name>"
  bool scalar = false;  ///< a 0-d float64 tensor instead of one shaped like the parameter
};

struct ParamState {
  std::string name;
  at::Tensor param;
  bool decay = false;
  int64_t step = 0;                ///< updates applied so far ("<param>.step", 0-d int64)
  std::vector<at::Tensor> slots;   ///< one per SlotSpec, zero-initialised
};

/// step() skips parameters without a grad (frozen ones: no update, no weight decay, state and step count
/// untouched), counts the step of the others, then calls update(). State exists for every parameter from
/// construction, so a never-updated one round-trips through state_dict()/load_state_dict(). state_dict() holds
/// "<param>.<slot>" and "<param>.step" entries aliasing the live state; load_state_dict() checks
/// every entry before changing any.
class PerParamOptimizer : public sdk::Optimizer {
 public:
  void step() override;
  void set_lr_factor(double factor) override { lr_ = base_lr_ * factor; }
  double lr() const override { return lr_; }
  sdk::StateDict state_dict() const override;
  void load_state_dict(const sdk::StateDict& state) override;

  const std::vector<ParamState>& states() const { return states_; }

 protected:
  /// Parameters in `groups` (decay first), each with the given state slots.
  PerParamOptimizer(std::string optimizer, double base_lr, const sdk::DecayGroups& groups,
                    std::vector<SlotSpec> slots);
  /// One update of s.param from grad at the current lr_; s.step already counts it. Gradients are off.
  virtual void update(ParamState& s, const at::Tensor& grad) = 0;
  /// The step counts in `state`, after checking every entry (throws sdk::Error naming the first bad one).
  std::vector<int64_t> check_state(const sdk::StateDict& state) const;
  /// Copies checked entries into the live state.
  void apply_state(const sdk::StateDict& state, const std::vector<int64_t>& steps);

  std::string optimizer_;
  double base_lr_;
  double lr_;
  std::vector<ParamState> states_;
  std::vector<SlotSpec> slot_specs_;

 private:
  void add_group(const std::vector<sdk::NamedParameter>& params, bool decay);
  std::set<std::string> names_;
};

}  // namespace kforge::builtin::optimizers
