// Whether a plugin directory or file is safe to load from: a plugin runs with the trainer's rights,
// so no other user may be able to put code there.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::plugins {

/// Why loading from `path` (a plugin directory or file) is unsafe, or "" when it is not: it is
/// writable by every user (a directory without the sticky bit), or owned by a user other than this
/// process's effective user and root. The reason names the path, the mode or owner, and the fix.
std::string unsafe_location(const std::filesystem::path& path);

}  // namespace kforge::plugins
