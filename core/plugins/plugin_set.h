// PluginSet: discovery of libkforge_*.so files in the plugin directories, in a stable order.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "plugins/plugin_file.h"

namespace kforge::plugins {

class PluginSet {
 public:
  /// Opens every libkforge_*.so in each directory (sorted by file name within a directory,
  /// directories in the order given, each file once). Throws sdk::Error naming a directory that
  /// does not exist. Files that fail a check stay in the set, refused, with their reason.
  static PluginSet discover(const std::vector<std::filesystem::path>& dirs);

  std::vector<PluginFile>& files() { return files_; }
  const std::vector<PluginFile>& files() const { return files_; }
  bool all_ok() const;
  /// One line per refused file.
  std::string errors() const;

 private:
  void refuse_duplicates();
  std::vector<PluginFile> files_;
};

}  // namespace kforge::plugins
