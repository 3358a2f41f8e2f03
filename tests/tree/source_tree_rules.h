// The rules of the source tree that the compiler does not check: no plugin includes another plugin's folder, and no
// two source files share a name.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::tree {

/// Every quoted #include of a source under `plugins_root` (plugins/) that reaches into another plugin's folder: by
/// that folder's name ("video/x.h"), by a path relative to the including file ("../models/x.h"), or by a bare name
/// that only another plugin's folder holds ("linear.h" from plugins/vlm when it is plugins/models/linear.h). What
/// plugins share lives in plugins/common/, which any plugin may include and which itself includes no plugin. One
/// line per include, "plugins/<folder>/<file>:<line> includes \"<name>\" from plugins/<other>/".
std::vector<std::string> plugin_include_violations(const std::filesystem::path& plugins_root);

/// The source folders of the tree (the rest is build trees, data, configs, scripts and documents).
inline const std::vector<std::string> kSourceFolders = {"benchmarks", "cmake", "core",  "examples",
                                                        "fuzz",       "plugins", "sdk", "tests"};

/// Source file names (.h, .hpp, .cpp, .cc) that more than one file below `root`'s `folders` bears, but for the
/// entry points each plugin and each program has (plugin.cpp, main.cpp): one line per name, "<name>: <path>, <path>"
/// (paths relative to `root`, sorted), in name order. A name names one thing wherever it is met.
std::vector<std::string> repeated_file_names(const std::filesystem::path& root, const std::vector<std::string>& folders);

}  // namespace kforge::tree
