// The configuration reference (`kforge config reference --format markdown`): every section and key of kforge's
// schema and of the loaded plugins' declarations, as one Markdown page.
#pragma once

#include <string>

#include "plugins/plugin_set.h"

namespace kforge::cli {

/// The Markdown page for kforge's schema and the loaded components of `set` (refused files left out). Deterministic:
/// sections in schema order, components sorted by kind and name, plugins named without their paths.
std::string config_reference_markdown(const plugins::PluginSet& set);

}  // namespace kforge::cli
