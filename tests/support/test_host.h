// Test helpers: the built plugins loaded as `kforge run` loads them, and configs from TOML text.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "plugins/host.h"
#include "config/job_config.h"

namespace kforge::test {

/// The built-in plugins (build tree) plus `extra_dirs`, discovered and registered.
std::unique_ptr<plugins::PluginHost> load_builtin_plugins(const std::vector<std::string>& extra_dirs = {});

/// A resolved, validated JobConfig from TOML text and overrides, against the loaded plugins.
config::JobConfig job_from_toml(const std::string& toml, const plugins::Registry& registry,
                                const std::vector<std::string>& overrides = {});

/// A fresh empty directory under the system temp dir, unique per call; removed at the end of the test binary when
/// every test passed, kept otherwise.
std::filesystem::path temp_dir(const std::string& label);

/// Runs a shell command, returning its exit status; stdout+stderr go to *output when given.
int run_command(const std::string& command, std::string* output = nullptr);

}  // namespace kforge::test
