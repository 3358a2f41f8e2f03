// Component rules: the selected components' own checks of a resolved config (their validation hooks), reported as
// kforge reports its own rules: "<file>:<line>: [section] key = value: message".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/resolver.h"
#include "config/value.h"

namespace kforge::config {

/// The resolved tree as a hook reads it: {"world_size": N, "config": {"<section>": {"<key>": value}}}.
std::string config_json(const Value& tree, int64_t world_size);

/// Runs the rules of each component in order (0 for the world size while the config loads); throws
/// sdk::ConfigError for the first broken rule, naming its source, section, key and value.
void check_component_rules(const Value& tree, const std::vector<ComponentKeys>& components, int64_t world_size);

}  // namespace kforge::config
