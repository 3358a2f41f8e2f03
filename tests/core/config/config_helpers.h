// Helpers of the config tests: configs from TOML text and overrides, against a hand-built catalog
// (the default components, with no keys of their own), and the error a bad config raises.
#pragma once

#include <string>
#include <vector>

#include "config/job_config.h"
#include "config/resolver.h"
#include "config/value.h"
#include "kforge/sdk/error.h"

namespace kforge::test {

/// The components a default config selects (transformer, adamw, cosine, cross_entropy, memmap,
/// console, jsonl, softmax_topk) and the vision encoders, declaring no keys, the built-in adapters and [vlm] arches
/// as libkforge_vision.so and libkforge_vlm.so declare them (keys, capabilities, rules), the built-in optimizers and
/// schedulers with keys of their section whatever is selected (libkforge_optimizers.so's), plus `extra`.
config::Catalog base_catalog(const config::Catalog& extra = {});

/// Writes `toml` to a fresh cfg.toml and loads it with the overrides (load_job_config); an empty
/// `toml` loads no file (defaults and overrides only), since an empty file is refused.
config::JobConfig load(const std::string& toml, const std::vector<std::string>& overrides = {},
                       const config::Catalog& catalog = base_catalog());

/// The message of the sdk::ConfigError that loading raises; "" (and a test failure) when it loads.
std::string load_error(const std::string& toml, const std::vector<std::string>& overrides = {},
                       const config::Catalog& catalog = base_catalog());

/// The message of the sdk::ConfigError that check_world (kforge's rules and the selected components') raises on a
/// loaded config; "" when none.
std::string world_error(const std::string& toml, int world_size, const std::vector<std::string>& overrides = {});

/// A resolved key: tree[section][key].
const config::Value& at(const config::JobConfig& job, const std::string& section, const std::string& key);

/// Structural equality of two trees (types, values, order), ignoring sources.
bool same_tree(const config::Value& a, const config::Value& b, std::string* where = nullptr);

}  // namespace kforge::test
