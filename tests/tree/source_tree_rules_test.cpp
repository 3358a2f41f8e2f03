// The source tree's rules, on the tree itself and on small trees that break them.
#include "source_tree_rules.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace kforge::tree {
namespace {

namespace fs = std::filesystem;

std::string lines(const std::vector<std::string>& list) {
  std::string text;
  for (const std::string& item : list) text += "  " + item + "\n";
  return text;
}

// A scratch tree for one test: `files` are {path, content}.
fs::path tree_of(const std::string& name, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path root = fs::temp_directory_path() / ("kforge_tree_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const auto& [path, content] : files) {
    fs::create_directories((root / path).parent_path());
    std::ofstream(root / path) << content;
  }
  return root;
}

TEST(PluginIncludes, NoPluginIncludesAnotherPluginsFolder) {
  const std::vector<std::string> violations = plugin_include_violations(fs::path(KFORGE_SOURCE_DIR) / "plugins");
  EXPECT_TRUE(violations.empty()) << "Plugins include other plugins' folders; move what both use into a library "
                                     "under plugins/common/ (its own folder and CMake target):\n"
                                  << lines(violations);
}

TEST(PluginIncludes, FindsEachWayIntoAnotherPluginsFolder) {
  const fs::path root = tree_of("includes", {
      {"plugins/a/own.h", ""},
      {"plugins/a/a.cpp", "#include \"own.h\"\n#include \"b_only.h\"\n#include \"b/b_only.h\"\n"
                          "  #  include \"../b/b_only.h\"\n#include \"lib/shared.h\"\n#include \"kforge/sdk/error.h\"\n"
                          "#include <vector>\n"},
      {"plugins/b/b_only.h", ""},
      {"plugins/common/lib/shared.h", "#include \"b_only.h\"\n"},
  });
  std::vector<std::string> violations = plugin_include_violations(root / "plugins");
  std::sort(violations.begin(), violations.end());
  EXPECT_EQ(violations, (std::vector<std::string>{
                            "plugins/a/a.cpp:2 includes \"b_only.h\" from plugins/b/",
                            "plugins/a/a.cpp:3 includes \"b/b_only.h\" from plugins/b/",
                            "plugins/a/a.cpp:4 includes \"../b/b_only.h\" from plugins/b/",
                            "plugins/common/lib/shared.h:1 includes \"b_only.h\" from plugins/b/",
                        }));
  fs::remove_all(root);
}

TEST(FileNames, NoTwoSourceFilesShareAName) {
  const std::vector<std::string> repeated = repeated_file_names(KFORGE_SOURCE_DIR, kSourceFolders);
  EXPECT_TRUE(repeated.empty()) << "Source files share names; rename them after what each holds:\n" << lines(repeated);
}

TEST(FileNames, FindsEachRepeatedNameButTheEntryPoints) {
  const fs::path root = tree_of("names", {
      {"core/a/x.h", ""},
      {"core/b/x.h", ""},
      {"tests/a/x.h", ""},
      {"core/a/y.cpp", ""},
      {"tests/y.cpp", ""},
      {"core/a/z.cpp", ""},
      {"core/a/z.h", ""},
      {"core/a/notes.txt", ""},
      {"docs/notes.txt", ""},
      {"plugins/a/plugin.cpp", ""},
      {"plugins/b/plugin.cpp", ""},
      {"core/main.cpp", ""},
      {"tests/main.cpp", ""},
      {"docs/x.h", ""},
  });
  EXPECT_EQ(repeated_file_names(root, {"core", "plugins", "tests"}),
            (std::vector<std::string>{"x.h: core/a/x.h, core/b/x.h, tests/a/x.h", "y.cpp: core/a/y.cpp, tests/y.cpp"}));
  fs::remove_all(root);
}

}  // namespace
}  // namespace kforge::tree
