// Validation rules on a resolved config: per section (KempnerForge's __post_init__ checks) and
// across sections once the world size is known (JobConfig.validate).
#pragma once

#include <vector>

#include "config/resolver.h"
#include "config/value.h"

namespace kforge::config {

/// Per-section rules (`selected`: the components the config selects, whose capabilities some rules read); throws
/// sdk::ConfigError naming the source, key, value and what is allowed.
void check_sections(const Value& resolved, const std::vector<ComponentKeys>& selected);

/// The mixture's cross-references ([[data.datasets]] names against dataset_path, phases and
/// anneal_weights; not all weights 0), checked when a run starts (the preflight).
void check_mixture(const Value& resolved);

/// Cross-section rules that need the world size (run after the process group exists).
void check_world(const Value& resolved, int world_size);

/// [train] seq_len against a VLM's image tokens in the residual stream (the selected strategy's capabilities say
/// whether they are there) and its text, checked with the world-size rules.
void check_sequence_budget(const Value& resolved, const std::vector<ComponentKeys>& selected);

}  // namespace kforge::config
