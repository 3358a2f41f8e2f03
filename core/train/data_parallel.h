// Data parallelism over one process group: gradient averaging in flat buckets and agreement on a
// step's loss and finiteness (what the trainer runs on its data-parallel group).
#pragma once

#include <cstdint>
#include <vector>

#include "dist/group.h"
#include "kforge/sdk/optimizer.h"
#include "train/step.h"

namespace kforge::train {

inline constexpr int64_t kGradientBucketBytes = int64_t{25} << 20;  // DDP's default bucket_cap_mb

/// Collective: replaces every parameter's gradient by its mean over the group, all_reducing the
/// gradients flattened into buckets of about `bucket_bytes` (one dtype per bucket). A gradient a
/// rank's batch did not reach counts as zero there, so every rank sends the same buckets.
void average_gradients(const dist::Group& group, const std::vector<sdk::NamedParameter>& params,
                       int64_t bucket_bytes = kGradientBucketBytes);

/// Collective: the loss averaged over the group; when the loss or norm is non-finite on any rank,
/// the grad norm is NaN on every rank (so all skip the update together).
StepResult average_step_result(const dist::Group& group, StepResult local);

}  // namespace kforge::train
