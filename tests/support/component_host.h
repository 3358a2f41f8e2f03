// Builds components the way the host does, from TOML text, with the built-in plugins loaded.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/test_host.h"
#include "plugins/components.h"

namespace kforge::test {

struct ComponentHost {
  explicit ComponentHost(const std::string& toml, const std::vector<std::string>& overrides = {})
      : host(load_builtin_plugins()), job(job_from_toml(toml, host->registry, overrides)), components(host->registry, job) {}

  std::unique_ptr<plugins::PluginHost> host;
  config::JobConfig job;
  plugins::Components components;
};

}  // namespace kforge::test
