// Lion (see lion.h).
#include "lion.h"

#include <ATen/ATen.h>

namespace kforge::builtin::optimizers {

Lion::Lion(const std::vector<sdk::NamedParameter>& params, const CommonHyper& hyper)
    : PerParamOptimizer("lion", hyper.lr, sdk::split_weight_decay(params, hyper.decay_embeddings), {{"exp_avg"}}),
      hyper_(hyper) {}

void Lion::update(ParamState& s, const at::Tensor& grad) {
  at::Tensor& exp_avg = s.slots[0];
  const double decay = s.decay ? 1.0 - lr_ * hyper_.weight_decay : 1.0;
  if (decay != 1.0) s.param.mul_(decay);
  const at::Tensor direction = at::mul(exp_avg, hyper_.beta1).add_(grad, 1.0 - hyper_.beta1).sign_();
  s.param.add_(direction, -lr_);
  exp_avg.mul_(hyper_.beta2).add_(grad, 1.0 - hyper_.beta2);
}

std::unique_ptr<sdk::Optimizer> make_lion(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params) {
  return std::make_unique<Lion>(params, read_common_hyper(ctx.section, "lion"));
}

}  // namespace kforge::builtin::optimizers
