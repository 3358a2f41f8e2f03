// PaLM logit z-loss: weight * mean over all positions of logsumexp(logits)^2.
#pragma once

#include <ATen/core/Tensor.h>

namespace kforge::builtin::losses {

/// logits [..., vocab], computed in at least float32 (KempnerForge's logits.float(); float64 stays).
/// Every position counts, including those whose label is ignored.
at::Tensor z_loss(const at::Tensor& logits, double weight);

}  // namespace kforge::builtin::losses
