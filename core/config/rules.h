// Validation rules on a resolved config: per section (KempnerForge's __post_init__ checks) and
// across sections once the world size is known (JobConfig.validate).
#pragma once

#include "config/value.h"

namespace kforge::config {

/// Per-section rules; throws sdk::ConfigError naming the source, key, value and what is allowed.
void check_sections(const Value& resolved);

/// The mixture's cross-references ([[data.datasets]] names against dataset_path, phases and
/// anneal_weights; not all weights 0), checked when a run starts (the preflight).
void check_mixture(const Value& resolved);

/// Cross-section rules that need the world size (run after the process group exists).
void check_world(const Value& resolved, int world_size);

}  // namespace kforge::config
