// PluginHost: the plugin directories from the command line, discovered, checked and registered.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "plugins/plugin_set.h"
#include "plugins/registry.h"

namespace kforge::plugins {

struct PluginHost {
  plugins::PluginSet set;
  plugins::Registry registry;  ///< refers into `set`
};

/// The --plugin-dir directories in order, then the default one next to the executable.
std::vector<std::filesystem::path> plugin_dirs(const std::vector<std::string>& from_command_line);

/// Discovers and registers every plugin. Files that fail stay in the set as refused, and so do files
/// another user could write to unless `allow_unsafe` (--allow-unsafe-plugin-dir); of two files with
/// the same kind and name, the one that is not kforge's own is refused.
std::unique_ptr<PluginHost> load_plugins(const std::vector<std::string>& plugin_dirs_from_command_line,
                                         bool allow_unsafe = false);

/// Discovers and registers the plugins of `dirs`, in order, as load_plugins does; `builtin_dir` is kforge's own
/// plugin directory (a host that is not an executable beside its plugins, the Python module, names it).
std::unique_ptr<PluginHost> load_plugins_from(const std::vector<std::filesystem::path>& dirs,
                                              const std::filesystem::path& builtin_dir, bool allow_unsafe = false);

}  // namespace kforge::plugins
