// The rules of the source tree that the compiler does not check: no plugin includes another plugin's folder.
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

}  // namespace kforge::tree
