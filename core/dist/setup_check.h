// The start-up agreement check: every rank loaded the same plugins and resolved the same config.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "dist/runtime.h"

namespace kforge::dist {

/// Collective. `plugins` is this rank's [{name, version, file, hash}]; `config_toml` its resolved
/// config. Throws sdk::Error on every rank when some rank differs from rank 0, naming the first
/// such rank and the plugin (or config line) that differs.
void check_same_setup(const Runtime& runtime, const nlohmann::json& plugins, const std::string& config_toml);

}  // namespace kforge::dist
