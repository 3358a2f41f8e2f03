// declared_core_keys: the core schema keys a component declares it reads or is enabled by, checked against the schema.
#pragma once

#include <vector>

#include "config/schema.h"
#include "plugins/plugin_file.h"

namespace kforge::plugins {

/// The spec of each of `c.core_keys` in the core schema section of c's kind, in declared order. Throws sdk::Error naming the key, the section and the closest key there when one is
/// missing.
std::vector<config::KeySpec> declared_core_keys(const ComponentMeta& c);

/// Checks `c.enabled_by` (when set): c's kind selects a list, and the key is an enabling key of
/// that kind's core section. Throws sdk::Error saying which rule fails.
void check_enabled_by(const ComponentMeta& c);

}  // namespace kforge::plugins
