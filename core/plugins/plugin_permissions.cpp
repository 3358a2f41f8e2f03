// Plugin directories and files another user could write to, or whose directories above they could (see
// plugin_permissions.h).
#include "plugins/plugin_permissions.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

namespace kforge::plugins {
namespace fs = std::filesystem;

namespace {

// A user of group `gid` other than this process's effective user and root: one the group names, or one whose primary
// group it is. Nothing when the group is this user's alone.
std::optional<std::string> other_member(gid_t gid) {
  const uid_t me = ::geteuid();
  const passwd* self = ::getpwuid(me);
  const std::string my_name = self != nullptr ? self->pw_name : "";
  if (const group* g = ::getgrgid(gid); g != nullptr) {
    for (char** name = g->gr_mem; *name != nullptr; ++name) {
      if (*name != my_name && std::string(*name) != "root") return std::string(*name);
    }
  }
  std::optional<std::string> found;
  ::setpwent();
  while (const passwd* p = ::getpwent()) {
    if (p->pw_gid == gid && p->pw_uid != me && p->pw_uid != 0) {
      found = p->pw_name;
      break;
    }
  }
  ::endpwent();
  return found;
}

// Why another user could write `path` (stat `st`), described as `what` ("the plugin directory /p"), or "": writable by
// every user or by a group with another member (a directory with the sticky bit excepted: there only the owner of an
// entry can rename or remove it), or owned by a user other than this one and root.
std::string writable_by_others(const fs::path& path, const struct stat& st, const std::string& what) {
  const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  const std::string mode =
      fmt::format("mode {:04o}{}", st.st_mode & 07777, S_ISDIR(st.st_mode) && !sticky_dir ? ", no sticky bit" : "");
  if ((st.st_mode & S_IWOTH) != 0 && !sticky_dir) {
    return fmt::format("{} is writable by every user ({}): chmod o-w {}", what, mode, path.string());
  }
  if ((st.st_mode & S_IWGRP) != 0 && !sticky_dir) {
    if (const std::optional<std::string> member = other_member(st.st_gid)) {
      const group* g = ::getgrgid(st.st_gid);
      return fmt::format("{} is writable by group {} (gid {}, {}), which has another member, user {}: chmod g-w {}",
                         what, g != nullptr ? g->gr_name : "?", st.st_gid, mode, *member, path.string());
    }
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return fmt::format("{} is owned by uid {}, neither you (uid {}) nor root: chown it to yourself or root", what,
                       st.st_uid, ::geteuid());
  }
  return "";
}

}  // namespace

std::string unsafe_location(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // what cannot be read is reported when it is opened
  const std::string what = fmt::format("plugin {} {}", S_ISDIR(st.st_mode) ? "directory" : "file", path.string());
  if (std::string why = writable_by_others(path, st, "the " + what); !why.empty()) return why;
  // A user who can write a directory above can rename the one below it and put another in its place.
  const fs::path full = fs::absolute(path);
  for (fs::path up = full.parent_path(); !up.empty(); up = up.parent_path()) {
    if (::stat(up.c_str(), &st) != 0) return "";
    const std::string above = fmt::format("the directory {} above the {}", up.string(), what);
    if (std::string why = writable_by_others(up, st, above); !why.empty()) return why;
    if (up == up.root_path()) break;
  }
  return "";
}

}  // namespace kforge::plugins
