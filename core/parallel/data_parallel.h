// Data parallelism over one process group: gradient averaging in flat buckets and agreement on a
// step's loss, finiteness and trained tokens (what the trainer runs on its data-parallel group).
#pragma once

#include <cstdint>
#include <vector>

#include "dist/group.h"
#include "kforge/sdk/optimizer.h"
#include "parallel/step_result.h"

namespace kforge::parallel {

inline constexpr int64_t kGradientBucketBytes = int64_t{25} << 20;  // DDP's default bucket_cap_mb

/// Collective: replaces every parameter's gradient by its mean over the group, all_reducing the
/// gradients flattened into buckets of about `bucket_bytes` (one dtype per bucket). A gradient a
/// rank's batch did not reach counts as zero there, so every rank sends the same buckets.
void average_gradients(const dist::Group& group, const std::vector<sdk::NamedParameter>& params,
                       int64_t bucket_bytes = kGradientBucketBytes);

/// A step's outcome as every rank of a data-parallel group agrees on it.
struct AgreedStep {
  StepResult result;           ///< the loss averaged over the group (see average_step_result)
  int64_t trained_tokens = 0;  ///< labels != -100 of the global batch: the sum of the ranks' counts
};

/// Collective (a max all-reduce of one flag): whether `flag` is true on any rank of `group`.
bool any_in_group(const dist::Group& group, bool flag);

/// Collective (one all-reduce): the loss averaged over the group and the ranks' `trained_tokens` summed; when the loss
/// or norm is non-finite on any rank, the grad norm is NaN on every rank (so all skip the update together).
AgreedStep average_step_result(const dist::Group& group, StepResult local, int64_t trained_tokens);

}  // namespace kforge::parallel
