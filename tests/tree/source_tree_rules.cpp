// The source tree's rules: each a scan of the files below a root.
#include "source_tree_rules.h"

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace kforge::tree {

namespace fs = std::filesystem;

namespace {

constexpr const char* kShared = "common";  // plugins/common: the libraries plugins share

bool is_source(const fs::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".h" || ext == ".hpp" || ext == ".cpp" || ext == ".cc";
}

// The folder of plugins/ that `file` lies in, if any.
std::optional<std::string> folder_of(const fs::path& plugins_root, const fs::path& file) {
  const fs::path relative = fs::weakly_canonical(file).lexically_relative(fs::weakly_canonical(plugins_root));
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative.begin()->string();
}

// The folder of plugins/ whose file `name` names, included from `including`, as the compiler would find it:
// next to the including file, under plugins/common/ or plugins/ (the include roots the plugins' libraries give),
// or else through another folder's include directory.
std::optional<std::string> included_folder(const fs::path& plugins_root, const fs::path& including,
                                           const std::string& name) {
  for (const fs::path& root : {including.parent_path(), plugins_root / kShared, plugins_root}) {
    if (fs::exists(root / name)) return folder_of(plugins_root, root / name);
  }
  for (const fs::directory_entry& folder : fs::directory_iterator(plugins_root)) {
    if (folder.is_directory() && fs::exists(folder.path() / name)) return folder.path().filename().string();
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> plugin_include_violations(const fs::path& plugins_root) {
  static const std::regex include(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<std::string> violations;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(plugins_root)) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    const std::string own = *folder_of(plugins_root, entry.path());
    std::ifstream in(entry.path());
    std::string text;
    for (int line = 1; std::getline(in, text); ++line) {
      std::smatch match;
      if (!std::regex_search(text, match, include)) continue;
      const std::optional<std::string> folder = included_folder(plugins_root, entry.path(), match[1]);
      if (folder && *folder != own && *folder != kShared) {
        violations.push_back("plugins/" + entry.path().lexically_relative(plugins_root).string() + ":" +
                             std::to_string(line) + " includes \"" + match[1].str() + "\" from plugins/" + *folder +
                             "/");
      }
    }
  }
  return violations;
}

std::vector<std::string> repeated_file_names(const fs::path& root, const std::vector<std::string>& folders) {
  static const std::set<std::string> entry_points = {"plugin.cpp", "main.cpp"};
  std::map<std::string, std::set<std::string>> paths_by_name;
  for (const std::string& folder : folders) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && is_source(entry.path()) && !entry_points.count(name)) {
        paths_by_name[name].insert(entry.path().lexically_relative(root).string());
      }
    }
  }
  std::vector<std::string> repeated;
  for (const auto& [name, paths] : paths_by_name) {
    if (paths.size() < 2) continue;
    std::string line = name + ":";
    for (const std::string& path : paths) line += (line.back() == ':' ? " " : ", ") + path;
    repeated.push_back(line);
  }
  return repeated;
}

}  // namespace kforge::tree
