// The Python process's plugins: kforge's own directory and any others, loaded once, on first use.
#pragma once

#include "plugins/registry.h"

namespace kforge::python {

/// The registry of the process's plugins, loaded on the first call. Throws sdk::Error naming the plugin files that
/// failed their checks.
const plugins::Registry& registry();

}  // namespace kforge::python
