// Plugin directories and files another user could write to (see plugin_permissions.h).
#include "plugins/plugin_permissions.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kforge::plugins {

std::string unsafe_location(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // what cannot be read is reported when it is opened
  const bool dir = S_ISDIR(st.st_mode);
  const char* what = dir ? "plugin directory" : "plugin file";
  const unsigned mode = st.st_mode & 07777;
  if ((st.st_mode & S_IWOTH) != 0 && !(dir && (st.st_mode & S_ISVTX) != 0)) {
    return fmt::format("the {} {} is writable by every user (mode {:04o}{}): chmod o-w {}", what, path.string(), mode,
                       dir ? ", no sticky bit" : "", path.string());
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return fmt::format("the {} {} is owned by uid {}, neither you (uid {}) nor root: chown it to yourself or root",
                       what, path.string(), st.st_uid, ::geteuid());
  }
  return "";
}

}  // namespace kforge::plugins
