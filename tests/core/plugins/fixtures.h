// Paths of the fixture plugins (tests/fixtures) and a one-call discover for a fixture case.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "plugins/plugin_set.h"

namespace kforge::test {

/// ${KFORGE_FIXTURE_DIR}/<name>: the directory one fixture case is built into.
inline std::filesystem::path fixture_dir(const std::string& name) {
  return std::filesystem::path(KFORGE_FIXTURE_DIR) / name;
}

/// The canonical path of a fixture file, as PluginSet reports it.
inline std::string fixture_file(const std::string& dir, const std::string& file) {
  return std::filesystem::canonical(fixture_dir(dir) / file).string();
}

/// PluginSet::discover over the named fixture directories, in order.
inline plugins::PluginSet discover_fixtures(const std::vector<std::string>& names) {
  std::vector<std::filesystem::path> dirs;
  for (const auto& n : names) dirs.push_back(fixture_dir(n));
  return plugins::PluginSet::discover(dirs);
}

}  // namespace kforge::test
