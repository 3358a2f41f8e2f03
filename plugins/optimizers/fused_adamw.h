// Fused multi-tensor AdamW: one pass over each tensor's contiguous data (read p, g, m, v once,
// write p, m, v once), all tensors of a step in one parallel loop, same math as adamw_update.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "adamw_update.h"
#include "vector_lanes.h"

namespace kforge::builtin::optimizers {

struct FusedAdamWTensor {
  at::Tensor param, grad, exp_avg, exp_avg_sq;
  AdamWHyper hyper;
  int64_t step = 1;  ///< this update's step count (>= 1)
};

/// Whether the fused kernel takes this parameter: dense contiguous CPU float32/float64 with a
/// gradient and moments of the same dtype and layout. Others go through adamw_update.
bool fused_adamw_supports(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg);

/// Updates every tensor in place, in torch.optim.AdamW's (single-tensor) operation order, each
/// operation rounded to the tensor's dtype as ATen rounds it (results within a few ulps of
/// adamw_update: ATen may fuse a multiply-add). Each tensor must pass fused_adamw_supports.
/// Call with gradient recording off.
void fused_adamw_update(const std::vector<FusedAdamWTensor>& tensors);

/// The vector width the update runs at (the widest the CPU runs, within KFORGE_CPU_CAPABILITY); tests set each.
lanes::Width fused_adamw_width();
/// Throws sdk::Error for a width this CPU cannot run.
void set_fused_adamw_width(lanes::Width width);

}  // namespace kforge::builtin::optimizers
