// Plugin directories and plugin file names (see plugin_search.h).
#include "listing/plugin_search.h"

#include <algorithm>

namespace kforge::listing {
namespace fs = std::filesystem;

fs::path current_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

fs::path shipped_plugin_dir(const fs::path& host_exe) {
  return host_exe.parent_path().parent_path() / "lib" / "kforge" / "plugins";
}

std::vector<fs::path> plugin_search_dirs(const std::vector<std::string>& from_command_line, const fs::path& host_exe) {
  std::vector<fs::path> dirs(from_command_line.begin(), from_command_line.end());
  std::error_code ec;
  const fs::path shipped = shipped_plugin_dir(host_exe);
  if (!host_exe.empty() && fs::is_directory(shipped, ec)) dirs.push_back(shipped);
  return dirs;
}

std::vector<fs::path> plugin_files(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    std::error_code type_ec;
    if (path.filename().string().rfind("libkforge_", 0) == 0 && path.extension() == ".so" &&
        it->is_regular_file(type_ec)) {
      found.push_back(path);
    }
  }
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return found;
}

}  // namespace kforge::listing
