// StepResult: what a step body reports of one optimizer step (its loss, the gradient norm, the rows' losses).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace kforge::parallel {

struct StepResult {
  double loss = 0;       ///< mean of the micro-batch losses, each weighted by its share of the trained tokens
  double grad_norm = 0;  ///< global L2 norm of the gradients before clipping
  /// For batches that carry their sources (a data mixture, on a step whose metrics are logged): per
  /// micro-batch, float64 [B] each row's mean cross-entropy (row_cross_entropy), for the
  /// loss/<source> metrics; may be left empty.
  std::vector<at::Tensor> row_losses;
};

}  // namespace kforge::parallel
