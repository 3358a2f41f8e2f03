// AdamW over named parameters (see adamw.h).
#include "adamw.h"

#include <ATen/ATen.h>

#include <set>
#include <utility>

#include "device_adamw.h"
#include "fused_adamw.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/param_groups.h"
#include "optimizer_config.h"
#include "state_entries.h"

namespace kforge::builtin::optimizers {

AdamW::AdamW(const std::vector<sdk::NamedParameter>& params, const AdamWOptions& options)
    : options_(options), lr_(options.hyper.lr) {
  const sdk::DecayGroups groups = sdk::split_weight_decay(params, options.decay_embeddings);
  add_group(groups.decay, true);
  add_group(groups.no_decay, false);
  make_scratch_views();
}

void AdamW::add_group(const std::vector<sdk::NamedParameter>& params, bool decay) {
  at::NoGradGuard no_grad;
  for (const auto& p : params) {
    if (!names_.insert(p.name).second) throw sdk::Error("adamw: parameter name '" + p.name + "' appears twice");
    // The parameter itself (not a detached alias): its .grad() is what step() reads.
    slots_.push_back(Slot{p.name, p.tensor, at::zeros_like(p.tensor, at::MemoryFormat::Preserve),
                          at::zeros_like(p.tensor, at::MemoryFormat::Preserve), at::Tensor(), 0, decay});
  }
}

// One flat buffer per (dtype, device), as large as the largest parameter using it.
void AdamW::make_scratch_views() {
  std::vector<at::Tensor> buffers;
  auto buffer_for = [&](const at::Tensor& like) -> at::Tensor& {
    for (at::Tensor& b : buffers) {
      if (b.scalar_type() == like.scalar_type() && b.device() == like.device()) return b;
    }
    int64_t largest = 0;
    for (const Slot& s : slots_) {
      if (s.param.scalar_type() == like.scalar_type() && s.param.device() == like.device()) {
        largest = std::max(largest, s.param.numel());
      }
    }
    buffers.push_back(at::empty({largest}, like.options()));
    return buffers.back();
  };
  for (Slot& s : slots_) s.scratch = buffer_for(s.param).narrow(0, 0, s.param.numel()).view(s.param.sizes());
}

void AdamW::step() {
  at::NoGradGuard no_grad;
  std::vector<FusedAdamWTensor> fused, device_fused;
  for (Slot& s : slots_) {
    const at::Tensor& grad = s.param.grad();
    if (!grad.defined()) continue;
    if (grad.is_sparse()) throw sdk::Error("adamw: parameter '" + s.name + "' has a sparse gradient");
    AdamWHyper h = options_.hyper;
    h.lr = lr_;
    h.weight_decay = s.decay ? options_.hyper.weight_decay : 0.0;
    ++s.step;
    if (options_.fused && fused_adamw_supports(s.param, grad, s.exp_avg)) {
      fused.push_back({s.param, grad, s.exp_avg, s.exp_avg_sq, h, s.step});
    } else if (options_.fused && device_fused_adamw_supports(s.param, grad, s.exp_avg)) {
      device_fused.push_back({s.param, grad, s.exp_avg, s.exp_avg_sq, h, s.step});
    } else {
      adamw_update(s.param, grad, s.exp_avg, s.exp_avg_sq, s.scratch, h, s.step);
    }
  }
  if (!fused.empty()) fused_adamw_update(fused);
  if (!device_fused.empty()) device_fused_adamw_update(device_fused);
}

void AdamW::set_lr_factor(double factor) { lr_ = options_.hyper.lr * factor; }

sdk::StateDict AdamW::state_dict() const {
  sdk::StateDict out;
  for (const Slot& s : slots_) {
    out.emplace(s.name + ".exp_avg", s.exp_avg);
    out.emplace(s.name + ".exp_avg_sq", s.exp_avg_sq);
    out.emplace(s.name + ".step", at::scalar_tensor(s.step, at::kLong));
  }
  return out;
}

void AdamW::load_state_dict(const sdk::StateDict& state) {
  // Check everything before changing anything, so a failed load leaves the optimizer as it was.
  std::vector<int64_t> steps;
  steps.reserve(slots_.size());
  for (const Slot& s : slots_) {
    require_entry(state, s.name + ".exp_avg", s.param);
    require_entry(state, s.name + ".exp_avg_sq", s.param);
    steps.push_back(require_step(state, s.name + ".step"));
  }
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.exp_avg.copy_(state.at(s.name + ".exp_avg"));
    s.exp_avg_sq.copy_(state.at(s.name + ".exp_avg_sq"));
    s.step = steps[i];
  }
}

std::vector<std::string> AdamW::decayed_names() const {
  std::vector<std::string> names;
  for (const Slot& s : slots_) {
    if (s.decay) names.push_back(s.name);
  }
  return names;
}

std::unique_ptr<sdk::Optimizer> make_adamw(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params) {
  const CommonHyper common = read_common_hyper(ctx.section, "adamw");
  AdamWOptions options;
  options.hyper = AdamWHyper{common.lr, common.weight_decay, common.beta1, common.beta2, common.eps};
  options.decay_embeddings = common.decay_embeddings;
  options.fused = ctx.section.get_bool("fused");
  auto optimizer = std::make_unique<AdamW>(params, options);
  // KempnerForge's _should_decay decays every matrix that is not a bias, embeddings included (its docstring says
  // they are excluded); kforge excludes them unless decay_embeddings = true.
  const std::string embeddings =
      options.decay_embeddings
          ? "embeddings included ([optimizer] decay_embeddings = true), as KempnerForge's code decays them"
          : "embeddings excluded ([optimizer] decay_embeddings = false); KempnerForge's code decays them, whatever "
            "its docstring says: set decay_embeddings = true to match it";
  ctx.log.info("adamw: weight decay on " + std::to_string(optimizer->decayed_names().size()) + " of " +
               std::to_string(optimizer->size()) + " trainable tensors (" + embeddings + ")" +
               (options.fused ? ", fused" : ""));
  return optimizer;
}

}  // namespace kforge::builtin::optimizers
