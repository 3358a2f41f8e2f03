// Test helper: builds the `transformer` model plugin exactly as the host does (registry ->
// JobConfig -> plugins::Components::model()) from the text of a [model] section.
#pragma once

#include <kforge/sdk/model.h>

#include <memory>
#include <string>

#include "plugins/host.h"
#include "config/job_config.h"
#include "support/test_host.h"
#include "plugins/components.h"

namespace kforge::test::models {

/// The built-in plugins, loaded once and kept loaded for the whole test binary (models built by a
/// plugin must not outlive its library).
inline plugins::PluginHost& host() {
  static std::unique_ptr<plugins::PluginHost> h = load_builtin_plugins();
  return *h;
}

/// A resolved JobConfig from TOML text (e.g. "[model]\ndim = 64\n...").
inline config::JobConfig job_for(const std::string& toml) { return job_from_toml(toml, host().registry); }

/// The model the host would build for this config.
inline std::shared_ptr<sdk::Model> build_model(const std::string& toml) {
  const config::JobConfig job = job_for(toml);
  plugins::Components comps(host().registry, job);
  return comps.model();
}

/// Sum of numel over named_parameters().
inline int64_t count_params(const sdk::Model& model) {
  int64_t n = 0;
  for (const auto& p : model.named_parameters()) n += p.value().numel();
  return n;
}

}  // namespace kforge::test::models
