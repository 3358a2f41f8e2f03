// Token weights: what turns the per-batch token means of a step (or an evaluation) into the mean over every trained
// token of all the ranks' batches, as one rank holding the whole global batch computes it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "dist/group.h"

namespace kforge::parallel {

/// The tokens a batch trains on: its labels other than -100 (prompt and padding positions).
int64_t trained_tokens(const at::Tensor& labels);

/// w_k = counts[k] x (batches x group size) / (sum of the counts over the batches of every member of `group`): the mean
/// of w_k x loss_k over all those batches is the token mean of the loss when each loss_k is its batch's token mean.
/// Equal counts give weights of exactly 1 (so runs whose batches all train as many tokens, as text runs, are
/// unchanged); no token anywhere gives weights of 1. Collective over `group`: every member passes as many counts.
std::vector<double> token_weights(const std::vector<int64_t>& counts, const dist::Group& group);

}  // namespace kforge::parallel
