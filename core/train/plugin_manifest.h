// The plugin files a run uses, as recorded in checkpoints and compared across ranks at start-up.
#pragma once

#include <nlohmann/json.hpp>

#include "plugins/registry.h"

namespace kforge::train {

/// [{file, name, version}] of every plugin file that registered a component; with `hashes`, each
/// entry also has "hash", the file's XXH3-64 as `xxhsum -H3` prints it (sdk::Error naming a file it cannot read).
nlohmann::json plugin_manifest(const plugins::Registry& registry, bool hashes);

}  // namespace kforge::train
