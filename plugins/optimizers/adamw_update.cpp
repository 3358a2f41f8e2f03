// One AdamW update of one tensor (see adamw_update.h).
#include "adamw_update.h"

#include <ATen/ATen.h>

#include <cmath>

namespace kforge::builtin::optimizers {

void adamw_update(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg,
                  const at::Tensor& exp_avg_sq, at::Tensor& scratch, const AdamWHyper& h, int64_t step) {
  // Decoupled weight decay; a factor of exactly 1 changes nothing, so it is skipped.
  const double decay = 1.0 - h.lr * h.weight_decay;
  if (decay != 1.0) param.mul_(decay);

  exp_avg.mul_(h.beta1).add_(grad, 1.0 - h.beta1);
  exp_avg_sq.mul_(h.beta2).addcmul_(grad, grad, 1.0 - h.beta2);

  const double steps = static_cast<double>(step);
  const double bias_correction1 = 1.0 - std::pow(h.beta1, steps);
  const double bias_correction2 = 1.0 - std::pow(h.beta2, steps);
  const double step_size = h.lr / bias_correction1;

  // denom = sqrt(exp_avg_sq) / sqrt(bc2) + eps, written into the scratch buffer.
  at::sqrt_out(scratch, exp_avg_sq);
  scratch.div_(std::sqrt(bias_correction2)).add_(h.eps);
  param.addcdiv_(exp_avg, scratch, -step_size);
}

}  // namespace kforge::builtin::optimizers
