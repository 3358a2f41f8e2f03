// Schedule-Free AdamW (see schedule_free_adamw.h).
#include "schedule_free_adamw.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "kforge/sdk/error.h"

namespace kforge::builtin::optimizers {
namespace {
enum Slot { kZ = 0, kX = 1, kExpAvgSq = 2, kWeightSum = 3 };
}  // namespace

ScheduleFreeAdamW::ScheduleFreeAdamW(const std::vector<sdk::NamedParameter>& params, const CommonHyper& hyper,
                                     int64_t warmup_steps)
    : PerParamOptimizer("schedule_free_adamw", hyper.lr, sdk::split_weight_decay(params, hyper.decay_embeddings),
                        {{"z"}, {"x"}, {"exp_avg_sq"}, {"weight_sum", true}}),
      hyper_(hyper),
      warmup_steps_(warmup_steps) {
  at::NoGradGuard no_grad;
  for (ParamState& s : states_) {
    s.slots[kZ].copy_(s.param);
    s.slots[kX].copy_(s.param);
  }
}

void ScheduleFreeAdamW::set_train_point(ParamState& s) const {
  s.param.copy_(at::lerp(s.slots[kZ], s.slots[kX], hyper_.beta1));
}

void ScheduleFreeAdamW::step() {
  if (eval_mode_) {
    throw sdk::Error("schedule_free_adamw: step() while the parameters hold the evaluation weights; "
                     "call use_train_weights() first");
  }
  PerParamOptimizer::step();
}

void ScheduleFreeAdamW::update(ParamState& s, const at::Tensor& grad) {
  const double k = static_cast<double>(s.step);
  const double warmup = warmup_steps_ > 0 ? std::min(1.0, k / static_cast<double>(warmup_steps_)) : 1.0;
  const double lr = lr_ * warmup;
  at::Tensor& z = s.slots[kZ];
  at::Tensor& v = s.slots[kExpAvgSq];
  v.mul_(hyper_.beta2).addcmul_(grad, grad, 1.0 - hyper_.beta2);
  const at::Tensor denom = at::div(v, 1.0 - std::pow(hyper_.beta2, k)).sqrt_().add_(hyper_.eps);
  z.addcdiv_(grad, denom, -lr);
  const double decay = s.decay ? 1.0 - lr * hyper_.weight_decay : 1.0;
  if (decay != 1.0) z.mul_(decay);
  const double weight_sum = s.slots[kWeightSum].add_(lr).item<double>();
  const double c = weight_sum > 0 ? lr * (1.0 - hyper_.beta1) / weight_sum : 0.0;
  s.slots[kX].lerp_(z, c);
  set_train_point(s);
}

void ScheduleFreeAdamW::load_state_dict(const sdk::StateDict& state) {
  PerParamOptimizer::load_state_dict(state);
  at::NoGradGuard no_grad;
  for (ParamState& s : states_) s.param.copy_(s.slots[kX]);
  eval_mode_ = true;
}

void ScheduleFreeAdamW::use_eval_weights() {
  if (eval_mode_) return;
  at::NoGradGuard no_grad;
  for (ParamState& s : states_) s.param.copy_(s.slots[kX]);
  eval_mode_ = true;
}

void ScheduleFreeAdamW::use_train_weights() {
  if (!eval_mode_) return;
  at::NoGradGuard no_grad;
  for (ParamState& s : states_) set_train_point(s);
  eval_mode_ = false;
}

std::unique_ptr<sdk::Optimizer> make_schedule_free_adamw(const sdk::BuildContext& ctx,
                                                         std::vector<sdk::NamedParameter> params) {
  const int64_t warmup_steps = ctx.section.get_int("schedule_free_warmup_steps");
  require_value(warmup_steps >= 0, "schedule_free_adamw", "schedule_free_warmup_steps", std::to_string(warmup_steps),
                "must be >= 0");
  return std::make_unique<ScheduleFreeAdamW>(params, read_common_hyper(ctx.section, "schedule_free_adamw"),
                                             warmup_steps);
}

}  // namespace kforge::builtin::optimizers
