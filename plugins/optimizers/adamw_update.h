// One AdamW update of one tensor, in the exact operation order of torch.optim.AdamW (single-tensor).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kforge::builtin::optimizers {

struct AdamWHyper {
  double lr = 0;
  double weight_decay = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

/// Updates param, exp_avg and exp_avg_sq in place from grad; `step` counts this update (>= 1).
/// `scratch` has param's shape, dtype and device; it receives the denominator, so no step allocates.
/// Call with gradient recording off.
void adamw_update(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg,
                  const at::Tensor& exp_avg_sq, at::Tensor& scratch, const AdamWHyper& h, int64_t step);

}  // namespace kforge::builtin::optimizers
