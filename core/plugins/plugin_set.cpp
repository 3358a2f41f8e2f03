#include "plugins/plugin_set.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "kforge/sdk/error.h"
#include "listing/plugin_search.h"
#include "plugins/plugin_permissions.h"

namespace kforge::plugins {
namespace fs = std::filesystem;

namespace {

// A file that is not opened because another user could have put it there.
PluginFile refused_unsafe(const fs::path& file, const std::string& why) {
  PluginFile plugin;
  plugin.path = file;
  plugin.refuse(
      fmt::format("{}: not opened: {}. A plugin runs with your rights, so another user must not be able to "
                  "write it or its directory. Fix that, or pass --allow-unsafe-plugin-dir to load it anyway.",
                  file.string(), why));
  return plugin;
}

// Why `file` (canonical) of a plugin directory is unsafe: its directory's reason, else its own (which covers its
// real directory through a symlink, and the directories above); "" when safe.
std::string unsafe_plugin(const std::string& dir_reason, const fs::path& file) {
  return dir_reason.empty() ? unsafe_location(file) : dir_reason;
}

}  // namespace

PluginSet PluginSet::discover(const std::vector<fs::path>& dirs, const DiscoverOptions& options) {
  PluginSet set;
  std::set<fs::path> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      throw sdk::Error(fmt::format("plugin directory '{}' does not exist or is not a directory "
                                   "(check --plugin-dir)",
                                   dir.string()));
    }
    const fs::path real_dir = fs::weakly_canonical(dir, ec);
    const std::string dir_reason = options.allow_unsafe ? "" : unsafe_location(real_dir);
    for (const fs::path& path : listing::plugin_files(dir)) {
      const fs::path canonical = fs::weakly_canonical(path, ec);
      if (!seen.insert(canonical).second) continue;
      const std::string why = options.allow_unsafe ? "" : unsafe_plugin(dir_reason, canonical);
      set.files_.push_back(why.empty() ? open_plugin(canonical) : refused_unsafe(canonical, why));
    }
  }
  set.refuse_duplicates(options.builtin_dir);
  return set;
}

void PluginSet::refuse_duplicates(const fs::path& builtin_dir) {
  // kforge's own plugins claim their names first: a newcomer reusing one is the file refused.
  std::error_code ec;
  const fs::path builtin = builtin_dir.empty() ? fs::path() : fs::weakly_canonical(builtin_dir, ec);
  std::vector<PluginFile*> order;
  for (PluginFile& file : files_) {
    if (!builtin.empty() && file.path.parent_path() == builtin) order.push_back(&file);
  }
  for (PluginFile& file : files_) {
    if (builtin.empty() || file.path.parent_path() != builtin) order.push_back(&file);
  }
  std::map<std::pair<std::string, std::string>, const PluginFile*> owner;
  for (PluginFile* file : order) {
    if (!file->ok) continue;
    for (const ComponentMeta& c : file->components) {
      auto it = owner.find({c.kind, c.name});
      if (it != owner.end()) {
        file->refuse(
            fmt::format("{}: {} '{}' is already provided by {}. Two plugins may not register the same kind and "
                        "name: remove one of the files or rename the component.",
                        file->path.string(), c.kind, c.name, it->second->path.string()));
        break;
      }
    }
    if (!file->ok) continue;
    for (const ComponentMeta& c : file->components) owner.emplace(std::make_pair(c.kind, c.name), file);
  }
}

bool PluginSet::all_ok() const {
  return std::all_of(files_.begin(), files_.end(), [](const PluginFile& f) { return f.ok; });
}

std::string PluginSet::errors() const {
  std::string out;
  for (const PluginFile& f : files_) {
    if (!f.ok) out += f.error + "\n";
  }
  return out;
}

}  // namespace kforge::plugins
