// Whether a plugin directory or file is safe to load from: a plugin runs with the trainer's rights,
// so no other user may be able to put code there.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::plugins {

/// Why loading from `path` (a plugin directory or file) is unsafe, or "" when it is not: it, or a
/// directory above it (who can write that can put another in its place), is writable by every user or
/// by a group with a member other than this process's effective user and root (a directory with the
/// sticky bit excepted), or is owned by a user other than those two. The reason names the path (the
/// directory above, if that is the one), the mode, group or owner, and the fix.
std::string unsafe_location(const std::filesystem::path& path);

}  // namespace kforge::plugins
