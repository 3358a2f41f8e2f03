// declared_core_keys: the core schema keys a component declares it reads, resolved to their specs.
#pragma once

#include <vector>

#include "config/schema.h"
#include "plugins/plugin_file.h"

namespace kforge::plugins {

/// The spec of each of `c.core_keys` in the core schema section of c's kind, in declared order.
/// Throws sdk::Error naming the key, the section and the closest key there when one is missing.
std::vector<const config::KeySpec*> declared_core_keys(const ComponentMeta& c);

}  // namespace kforge::plugins
