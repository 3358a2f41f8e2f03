// Gradient norms and clipping: torch's clip_grad_norm_ over one rank's parameters, and the pieces a norm over
// several ranks' shards is added up from.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "kforge/sdk/optimizer.h"

namespace kforge::parallel {

/// `grad`'s sum of squares as a float64 scalar: its L2 norm reduced at the gradient's precision (float for bfloat16),
/// as clip_grad_norm's per-tensor norms, squared in float64; what sharded clipping adds up over ranks. One pass over
/// the gradient, with no float64 copy of it.
at::Tensor squared_norm(const at::Tensor& grad);

/// Scales every defined gradient of `params` by min(1, max_norm / (norm + 1e-6)) (torch's clip_grad_norm_, given the
/// global norm, computed in float64 by the caller); returns `norm`.
double scale_to_norm(const std::vector<sdk::NamedParameter>& params, double norm, double max_norm);

/// torch.nn.utils.clip_grad_norm_ semantics: returns the pre-clip total norm and scales the
/// gradients by min(1, max_norm / (norm + 1e-6)).
double clip_grad_norm(const std::vector<sdk::NamedParameter>& params, double max_norm);

}  // namespace kforge::parallel
