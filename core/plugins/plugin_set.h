// PluginSet: discovery of libkforge_*.so files in the plugin directories, in a stable order.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "plugins/plugin_file.h"

namespace kforge::plugins {

/// How PluginSet::discover treats what it finds.
struct DiscoverOptions {
  /// kforge's own plugins: a file elsewhere that provides a kind and name one of them provides is
  /// the one refused, whatever the directory order.
  std::filesystem::path builtin_dir;
  /// Open files in a directory, or files, that another user could write to (plugin_permissions.h).
  /// By default they are refused unopened (--allow-unsafe-plugin-dir sets this).
  bool allow_unsafe = false;
};

class PluginSet {
 public:
  /// Opens every libkforge_*.so in each directory (sorted by file name within a directory,
  /// directories in the order given, each file once). Throws sdk::Error naming a directory that
  /// does not exist. Files that fail a check stay in the set, refused, with their reason; of two
  /// files that provide the same kind and name, the later one is refused (a built-in never is).
  static PluginSet discover(const std::vector<std::filesystem::path>& dirs, const DiscoverOptions& options = {});

  std::vector<PluginFile>& files() { return files_; }
  const std::vector<PluginFile>& files() const { return files_; }
  bool all_ok() const;
  /// One line per refused file.
  std::string errors() const;

 private:
  void refuse_duplicates(const std::filesystem::path& builtin_dir);
  std::vector<PluginFile> files_;
};

}  // namespace kforge::plugins
