// Muon with an AdamW fallback (see muon.h).
#include "muon.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "newton_schulz.h"

namespace kforge::builtin::optimizers {
namespace {

std::vector<sdk::NamedParameter> eligible_only(const std::vector<sdk::NamedParameter>& params, bool eligible) {
  std::vector<sdk::NamedParameter> out;
  for (const auto& p : params) {
    if (muon_eligible(p.name, p.tensor) == eligible) out.push_back(p);
  }
  return out;
}

sdk::DecayGroups muon_groups(const std::vector<sdk::NamedParameter>& params, bool decay_embeddings) {
  const sdk::DecayGroups all = sdk::split_weight_decay(params, decay_embeddings);
  return {eligible_only(all.decay, true), eligible_only(all.no_decay, true)};
}

AdamWOptions adamw_part(const MuonOptions& o) {
  AdamWOptions a;
  a.hyper = AdamWHyper{o.adam_lr, o.hyper.weight_decay, o.hyper.beta1, o.hyper.beta2, o.hyper.eps};
  a.decay_embeddings = o.hyper.decay_embeddings;
  return a;
}

}  // namespace

bool muon_eligible(const std::string& name, const at::Tensor& tensor) {
  if (tensor.dim() < 2 || tensor.numel() == 0) return false;
  if (name.find("embedding") != std::string::npos || name.find("output_head") != std::string::npos) return false;
  const double m = static_cast<double>(tensor.size(0));
  const double n = static_cast<double>(tensor.numel()) / m;
  return std::max(m, n) / std::min(m, n) <= 10.0;
}

Muon::Muon(const std::vector<sdk::NamedParameter>& params, const MuonOptions& options)
    : PerParamOptimizer("muon", options.hyper.lr, muon_groups(params, options.hyper.decay_embeddings),
                        {{"momentum_buffer"}}),
      options_(options),
      adamw_(std::make_unique<AdamW>(eligible_only(params, false), adamw_part(options))) {}

void Muon::update(ParamState& s, const at::Tensor& grad) {
  at::Tensor& buf = s.slots[0];
  buf.mul_(options_.momentum).add_(grad);
  const double m = static_cast<double>(s.param.size(0));
  const double n = static_cast<double>(s.param.numel()) / m;
  const at::Tensor u = newton_schulz(buf, options_.ns_steps).view(s.param.sizes()).to(s.param.scalar_type());
  const double decay = s.decay ? 1.0 - lr_ * options_.hyper.weight_decay : 1.0;
  if (decay != 1.0) s.param.mul_(decay);
  s.param.add_(u, -lr_ * std::sqrt(std::max(1.0, m / n)));
}

void Muon::step() {
  PerParamOptimizer::step();
  adamw_->step();
}

// The AdamW part's lr is rescaled by current_muon_lr / initial_muon_lr, i.e. the same factor.
void Muon::set_lr_factor(double factor) {
  PerParamOptimizer::set_lr_factor(factor);
  adamw_->set_lr_factor(factor);
}

sdk::StateDict Muon::state_dict() const {
  sdk::StateDict out = PerParamOptimizer::state_dict();
  for (auto& [key, value] : adamw_->state_dict()) out.emplace(key, value);
  return out;
}

void Muon::load_state_dict(const sdk::StateDict& state) {
  const std::vector<int64_t> steps = check_state(state);  // before the AdamW part changes anything
  adamw_->load_state_dict(state);
  apply_state(state, steps);
}

std::unique_ptr<sdk::Optimizer> make_muon(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params) {
  MuonOptions options;
  options.hyper = read_common_hyper(ctx.section, "muon");
  options.momentum = ctx.section.get_float("muon_momentum");
  require_value(options.momentum > 0 && options.momentum < 1, "muon", "muon_momentum", toml_number(options.momentum),
                "must be in (0, 1)");
  options.ns_steps = ctx.section.get_int("muon_ns_steps");
  require_value(options.ns_steps > 0, "muon", "muon_ns_steps", std::to_string(options.ns_steps), "must be > 0");
  if (ctx.section.has("muon_adam_lr")) {
    options.adam_lr = ctx.section.get_float("muon_adam_lr");
    require_value(options.adam_lr > 0, "muon", "muon_adam_lr", toml_number(options.adam_lr), "must be > 0");
  } else {
    options.adam_lr = options.hyper.lr;
  }
  auto optimizer = std::make_unique<Muon>(params, options);
  ctx.log.info("muon: " + std::to_string(optimizer->states().size()) + " tensors on Muon, " +
               std::to_string(optimizer->adamw().size()) + " on AdamW");
  return optimizer;
}

}  // namespace kforge::builtin::optimizers
