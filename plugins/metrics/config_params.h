// The resolved config TOML as flat (key, value) pairs, e.g. ("model.dim", "256"), for backends that
// record a run's parameters (MLflow params).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kforge::builtin::metrics {

/// Every leaf of the TOML text as "section.key" = its value as text: a string as is, a float in its
/// shortest round-trip form ("0.9", "1e-05"), arrays as "[0.9, 0.95]" / "[\"a\", \"b\"]". Tables nest with
/// dots; an array is one value.
/// Throws sdk::Error naming the line when the text is not TOML.
std::vector<std::pair<std::string, std::string>> flatten_config_toml(const std::string& toml);

}  // namespace kforge::builtin::metrics
