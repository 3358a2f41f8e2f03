// The Python process's plugins: kforge's own directory and any others, loaded once, on first use.
#pragma once

#include "plugins/plugin_set.h"
#include "plugins/registry.h"

namespace kforge::python {

/// The registry of the process's plugins, loaded on the first call. Throws sdk::Error naming the plugin files that
/// failed their checks.
const plugins::Registry& registry();

/// Registers the components of `set`'s files (the module's own, backed by Python) beside the plugins'; `set` must
/// outlive the process's registry. A file whose registration fails is marked refused, with the reason.
void register_plugins(plugins::PluginSet& set);

}  // namespace kforge::python
