// Builds optimizer, scheduler and loss components the way the host does, from TOML text.
#pragma once

#include <memory>
#include <string>

#include "support/test_host.h"
#include "train/components.h"

namespace kforge::test {

/// The built-in plugins plus the stub model/dataset plugin (KFORGE_TEST_STUB_PLUGIN_DIR); the job
/// selects the stubs and no metric backends, so only the optimizer, scheduler and loss matter.
struct ComponentHost {
  explicit ComponentHost(const std::string& toml)
      : host(load_builtin_plugins({KFORGE_TEST_STUB_PLUGIN_DIR})),
        job(job_from_toml(toml, host->registry,
                          {"--model.model_type=kforge_test_stub", "--data.dataset_type=kforge_test_stub",
                           "--metrics.backends=[]"})),
        components(host->registry, job) {}

  std::unique_ptr<cli::PluginHost> host;
  config::JobConfig job;
  train::Components components;
};

}  // namespace kforge::test
