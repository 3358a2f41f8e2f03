// The shared per-parameter-state optimizer base (see per_param_optimizer.h).
#include "per_param_optimizer.h"

#include <ATen/ATen.h>

#include <utility>

#include "kforge/sdk/error.h"
#include "state_entries.h"

namespace kforge::builtin::optimizers {

PerParamOptimizer::PerParamOptimizer(std::string optimizer, double base_lr, const sdk::DecayGroups& groups,
                                     std::vector<SlotSpec> slots)
    : optimizer_(std::move(optimizer)), base_lr_(base_lr), lr_(base_lr), slot_specs_(std::move(slots)) {
  add_group(groups.decay, true);
  add_group(groups.no_decay, false);
}

void PerParamOptimizer::add_group(const std::vector<sdk::NamedParameter>& params, bool decay) {
  at::NoGradGuard no_grad;
  for (const auto& p : params) {
    if (!names_.insert(p.name).second) {
      throw sdk::Error(optimizer_ + ": parameter name '" + p.name + "' appears twice");
    }
    ParamState s{p.name, p.tensor, decay, 0, {}};
    for (const SlotSpec& spec : slot_specs_) {
      s.slots.push_back(spec.scalar ? at::zeros({}, at::kDouble)
                                    : at::zeros_like(p.tensor, at::MemoryFormat::Preserve));
    }
    states_.push_back(std::move(s));
  }
}

void PerParamOptimizer::step() {
  at::NoGradGuard no_grad;
  for (ParamState& s : states_) {
    const at::Tensor& grad = s.param.grad();
    if (!grad.defined()) continue;
    if (grad.is_sparse()) throw sdk::Error(optimizer_ + ": parameter '" + s.name + "' has a sparse gradient");
    ++s.step;
    update(s, grad);
  }
}

sdk::StateDict PerParamOptimizer::state_dict() const {
  sdk::StateDict out;
  for (const ParamState& s : states_) {
    for (size_t i = 0; i < slot_specs_.size(); ++i) out.emplace(s.name + "." + slot_specs_[i].name, s.slots[i]);
    out.emplace(s.name + ".step", at::scalar_tensor(s.step, at::kLong));
  }
  return out;
}

std::vector<int64_t> PerParamOptimizer::check_state(const sdk::StateDict& state) const {
  std::vector<int64_t> steps;
  steps.reserve(states_.size());
  for (const ParamState& s : states_) {
    for (size_t i = 0; i < slot_specs_.size(); ++i) require_entry(state, s.name + "." + slot_specs_[i].name, s.slots[i]);
    steps.push_back(require_step(state, s.name + ".step"));
  }
  return steps;
}

void PerParamOptimizer::apply_state(const sdk::StateDict& state, const std::vector<int64_t>& steps) {
  at::NoGradGuard no_grad;
  for (size_t k = 0; k < states_.size(); ++k) {
    ParamState& s = states_[k];
    for (size_t i = 0; i < slot_specs_.size(); ++i) s.slots[i].copy_(state.at(s.name + "." + slot_specs_[i].name));
    s.step = steps[k];
  }
}

void PerParamOptimizer::load_state_dict(const sdk::StateDict& state) { apply_state(state, check_state(state)); }

}  // namespace kforge::builtin::optimizers
