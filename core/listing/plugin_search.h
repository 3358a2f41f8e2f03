// Where plugins are looked for and which files count as plugins: one LibTorch-free answer for the
// plugin loader (plugins/plugin_set) and the list-plugins cache (listing/listing_cache).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::listing {

/// /proc/self/exe: the running executable, symlinks resolved (empty if it cannot be read).
std::filesystem::path current_executable();

/// The directory of the plugins that ship with kforge: <host exe dir>/../lib/kforge/plugins.
std::filesystem::path shipped_plugin_dir(const std::filesystem::path& host_exe);

/// The plugin directories: the --plugin-dir ones in order, then shipped_plugin_dir(host_exe), when
/// that is a directory.
std::vector<std::filesystem::path> plugin_search_dirs(const std::vector<std::string>& from_command_line,
                                                      const std::filesystem::path& host_exe);

/// The plugin files of one directory: regular files named libkforge_*.so, sorted by file name.
/// Empty when the directory cannot be read.
std::vector<std::filesystem::path> plugin_files(const std::filesystem::path& dir);

}  // namespace kforge::listing
