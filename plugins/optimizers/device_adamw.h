// AdamW on an accelerator through LibTorch's own fused multi-tensor kernel (at::_fused_adamw_, LibTorch 2.1 and
// later): the device's counterpart of fused_adamw.h, which is CPU-only. Elsewhere adamw_update runs per tensor.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "fused_adamw.h"

namespace kforge::builtin::optimizers {

/// Whether LibTorch's fused kernel takes this parameter: a dense non-CPU floating tensor whose gradient and moments
/// match it, in a LibTorch that has the kernel (never in LibTorch 1.x, whose CUDA AdamW is per tensor).
bool device_fused_adamw_supports(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg);

/// Updates every tensor in place with torch.optim.AdamW(fused=True)'s math; each must pass
/// device_fused_adamw_supports. Call with gradient recording off.
void device_fused_adamw_update(const std::vector<FusedAdamWTensor>& tensors);

}  // namespace kforge::builtin::optimizers
