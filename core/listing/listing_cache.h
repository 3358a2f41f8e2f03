// The list-plugins listing cache, shared by the kforge front-end (which serves hits without loading
// LibTorch) and kforge-host (which writes entries). Stat-only: it never opens a plugin.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "listing/plugin_search.h"

namespace kforge::listing {

/// One line per input of a listing, each with its device, inode, mode, size, mtime and ctime (ns):
/// the host binary, every search directory (canonical path) and every libkforge_*.so in it
/// (sorted), and the directories above each, whose permissions decide whether a plugin is safe to
/// load. Any added, removed, replaced or touched input changes it.
std::string fingerprint(const std::filesystem::path& host_exe, const std::vector<std::filesystem::path>& dirs);

/// The same lines for a list of files (the shared libraries the host had loaded).
std::string fingerprint(const std::vector<std::string>& files);

/// The cache key of `list-plugins ARGS...` run by `host_exe`: the host, the exact arguments and the
/// loader's environment (LD_LIBRARY_PATH, LD_PRELOAD), which decides what the plugins link to.
std::string key(const std::filesystem::path& host_exe, const std::vector<std::string>& args);

/// $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else $HOME/.cache/kforge (empty if none is set).
std::filesystem::path cache_dir();

/// True when KFORGE_NO_CATALOGUE_CACHE is set to anything but "" or "0": no entry is read or written.
bool disabled();

/// One successful listing (exit status 0) and what it was computed from.
struct Entry {
  std::string key;
  std::vector<std::string> plugin_dirs;  ///< the --plugin-dir values, as given
  std::vector<std::string> libraries;    ///< the shared libraries the host had loaded
  std::string fingerprint;  ///< of the inputs (taken before any plugin was opened), then of `libraries`
  std::string output;  ///< the exact stdout bytes
};

/// An entry file's text for `body`: the magic line with the body's checksum, then the body.
std::string sealed_entry(const std::string& body);

/// Stores `entry` atomically (temporary file + rename). Never throws: a cache that cannot be
/// written is simply not written.
void store(const Entry& entry);

/// The stored stdout of `list-plugins ARGS...` if an intact entry for this key exists and every
/// input still has the fingerprint it had when the entry was written; nullopt otherwise.
std::optional<std::string> lookup(const std::filesystem::path& host_exe, const std::vector<std::string>& args);

}  // namespace kforge::listing
