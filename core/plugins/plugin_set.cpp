#include "plugins/plugin_set.h"

#include <unistd.h>

#include <fmt/format.h>
#include <map>
#include <set>

#include "kforge/sdk/error.h"
#include "listing/plugin_search.h"

namespace kforge::plugins {
namespace fs = std::filesystem;

PluginSet PluginSet::discover(const std::vector<fs::path>& dirs) {
  PluginSet set;
  std::set<fs::path> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      throw sdk::Error(fmt::format("plugin directory '{}' does not exist or is not a directory "
                                   "(check --plugin-dir)",
                                   dir.string()));
    }
    for (const fs::path& path : listing::plugin_files(dir)) {
      const fs::path canonical = fs::weakly_canonical(path, ec);
      if (!seen.insert(canonical).second) continue;
      set.files_.push_back(open_plugin(canonical));
    }
  }
  set.refuse_duplicates();
  return set;
}

void PluginSet::refuse_duplicates() {
  std::map<std::pair<std::string, std::string>, const PluginFile*> owner;
  for (PluginFile& file : files_) {
    if (!file.ok) continue;
    for (const ComponentMeta& c : file.components) {
      auto it = owner.find({c.kind, c.name});
      if (it != owner.end()) {
        file.refuse(fmt::format(
            "{}: {} '{}' is already provided by {}. Two plugins may not register the same kind and "
            "name: remove one of the files or rename the component.",
            file.path.string(), c.kind, c.name, it->second->path.string()));
        break;
      }
    }
    if (!file.ok) continue;
    for (const ComponentMeta& c : file.components) owner.emplace(std::make_pair(c.kind, c.name), &file);
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
