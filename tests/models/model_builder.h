// Test helper: builds the `transformer` model plugin exactly as the host does (registry ->
// JobConfig -> train::Components::model()) from the text of a [model] section.
#pragma once

#include <kforge/sdk/model.h>

#include <fstream>
#include <memory>
#include <string>

#include "cli/plugin_host.h"
#include "config/job_config.h"
#include "config/schema.h"
#include "plugins/catalog.h"
#include "support/test_host.h"
#include "train/components.h"

namespace kforge::test::models {

/// The built-in plugins, loaded once and kept loaded for the whole test binary (models built by a
/// plugin must not outlive its library).
inline cli::PluginHost& host() {
  static std::unique_ptr<cli::PluginHost> h = load_builtin_plugins();
  return *h;
}

/// The catalog of the loaded plugins. Config resolution checks that the components a config
/// selects by default (optimizer, scheduler, loss, dataset, metric backends, ...) are loaded; these
/// tests only build a model, so where such a default plugin is not built (yet) it stands in as a
/// key-less catalog entry. Only the model is ever built from a plugin.
inline config::Catalog catalog_for_model_tests() {
  config::Catalog catalog = plugins::make_catalog(host().registry);
  for (const config::ComponentSlot& slot : config::component_slots()) {
    if (std::string(slot.kind) == "model") continue;
    for (const config::SectionSpec& section : config::core_schema()) {
      if (section.name != slot.section) continue;
      const config::KeySpec* key = section.find(slot.selector);
      if (key == nullptr) continue;
      std::vector<std::string> names;
      if (key->default_value.type == config::Value::Type::String) names.push_back(key->default_value.s);
      for (const config::Value& item : key->default_value.list) names.push_back(item.s);
      for (const std::string& name : names) {
        bool found = false;
        for (const auto& c : catalog) found = found || (c.kind == slot.kind && c.name == name);
        if (!found) catalog.push_back(config::ComponentKeys{slot.kind, name, "0", "(placeholder in tests/models)", {}});
      }
    }
  }
  return catalog;
}

/// A resolved JobConfig from TOML text (e.g. "[model]\ndim = 64\n...").
inline config::JobConfig job_for(const std::string& toml) {
  const auto path = temp_dir("models") / "job.toml";
  std::ofstream(path) << toml;
  return config::load_job_config(path, {}, catalog_for_model_tests());
}

/// The model the host would build for this config.
inline std::shared_ptr<sdk::Model> build_model(const std::string& toml) {
  const config::JobConfig job = job_for(toml);
  train::Components comps(host().registry, job);
  return comps.model();
}

/// Sum of numel over named_parameters().
inline int64_t count_params(const sdk::Model& model) {
  int64_t n = 0;
  for (const auto& p : model.named_parameters()) n += p.value().numel();
  return n;
}

}  // namespace kforge::test::models
