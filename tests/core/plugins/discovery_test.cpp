// PluginSet::discover: which files are opened, in which order, each once; metadata of a good
// plugin; the missing-directory error; libraries stay loaded after the set is gone.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "kforge/sdk/error.h"
#include "core/plugins/fixtures.h"
#include "plugins/plugin_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> file_names(const plugins::PluginSet& set) {
  std::vector<std::string> names;
  for (const auto& f : set.files()) names.push_back(f.path.filename().string());
  return names;
}

TEST(PluginDiscovery, GoodPluginIsAcceptedWithItsBuildFactsAndMetadata) {
  const auto set = discover_fixtures({"good"});
  ASSERT_EQ(set.files().size(), 1u);
  const plugins::PluginFile& f = set.files()[0];
  EXPECT_TRUE(f.ok) << f.error;
  EXPECT_TRUE(set.all_ok());
  EXPECT_EQ(set.errors(), "");
  EXPECT_EQ(f.path.string(), fixture_file("good", "libkforge_fixture_good.so"));
  EXPECT_EQ(f.name, "fixture-good");
  EXPECT_EQ(f.version, "0.1.0");
  const kforge_build_info host = plugins::host_build_info();
  EXPECT_EQ(f.abi_version, host.abi_version);
  EXPECT_EQ(f.sdk_version, host.sdk_version);
  EXPECT_EQ(f.torch_version, host.torch_version);
  EXPECT_EQ(f.cxx11_abi, host.cxx11_abi);
  EXPECT_FALSE(f.cuda);
  ASSERT_NE(f.info, nullptr);

  ASSERT_EQ(f.components.size(), 2u);
  const plugins::ComponentMeta& opt = f.components[0];
  EXPECT_EQ(opt.kind, "optimizer");
  EXPECT_EQ(opt.name, "fixture_sgd");
  EXPECT_EQ(opt.version, "0.1.0");
  EXPECT_EQ(opt.summary, "SGD for loader tests");
  ASSERT_EQ(opt.keys.size(), 1u);
  EXPECT_EQ(opt.keys[0].name, "fixture_sgd_dampening");
  EXPECT_EQ(opt.keys[0].type, "float");
  EXPECT_EQ(opt.keys[0].default_value, "0.0");
  EXPECT_EQ(opt.keys[0].doc, "fraction of each gradient step dropped");
  const plugins::ComponentMeta& hook = f.components[1];
  EXPECT_EQ(hook.kind, "hook");
  EXPECT_EQ(hook.name, "fixture_counter");
  ASSERT_EQ(hook.keys.size(), 1u);
  EXPECT_EQ(hook.keys[0].name, "fixture_counter_every");
  EXPECT_EQ(hook.keys[0].type, "int");
}

TEST(PluginDiscovery, FilesOfADirectoryAreSortedByName) {
  // Built in the order c_third, b_second, a_first.
  const auto set = discover_fixtures({"sorted"});
  EXPECT_EQ(file_names(set), (std::vector<std::string>{"libkforge_fixture_a_first.so", "libkforge_fixture_b_second.so",
                                                       "libkforge_fixture_c_third.so"}));
  EXPECT_TRUE(set.all_ok()) << set.errors();
}

TEST(PluginDiscovery, DirectoriesKeepTheirCommandLineOrder) {
  EXPECT_EQ(file_names(discover_fixtures({"sorted", "good"})),
            (std::vector<std::string>{"libkforge_fixture_a_first.so", "libkforge_fixture_b_second.so",
                                      "libkforge_fixture_c_third.so", "libkforge_fixture_good.so"}));
  EXPECT_EQ(file_names(discover_fixtures({"good", "sorted"})),
            (std::vector<std::string>{"libkforge_fixture_good.so", "libkforge_fixture_a_first.so",
                                      "libkforge_fixture_b_second.so", "libkforge_fixture_c_third.so"}));
}

TEST(PluginDiscovery, TheSameFileReachedTwiceIsOpenedOnce) {
  // The same directory twice, once through "..", and a symlink to the file from another directory.
  const fs::path links = temp_dir("plugin_links");
  fs::create_symlink(fixture_dir("good") / "libkforge_fixture_good.so", links / "libkforge_alias.so");
  const auto set = plugins::PluginSet::discover(
      {fixture_dir("good"), fixture_dir("good") / ".." / "good", links});
  ASSERT_EQ(set.files().size(), 1u);
  EXPECT_TRUE(set.all_ok()) << set.errors();
  EXPECT_EQ(set.files()[0].path.string(), fixture_file("good", "libkforge_fixture_good.so"));
  fs::remove_all(links);
}

TEST(PluginDiscovery, AMissingDirectoryIsAnErrorNamingIt) {
  const fs::path missing = fixture_dir("no_such_directory");
  try {
    plugins::PluginSet::discover({fixture_dir("good"), missing});
    FAIL() << "expected sdk::Error";
  } catch (const sdk::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("plugin directory '" + missing.string() + "' does not exist"), std::string::npos)
        << message;
    EXPECT_NE(message.find("check --plugin-dir"), std::string::npos) << message;
  }
  // A regular file is not a directory either.
  EXPECT_THROW(plugins::PluginSet::discover({fixture_dir("good") / "libkforge_fixture_good.so"}), sdk::Error);
}

TEST(PluginDiscovery, FilesNotNamedLibkforgeStarSoAreIgnored) {
  // ignored/ holds a real plugin without the "lib" prefix, text files named libother.so,
  // libkforge_text.so.txt, libkforge_versioned.so.1, kforge_noprefix.so, and a directory named
  // libkforge_subdir.so: none of them is opened, so none is refused.
  ASSERT_TRUE(fs::exists(fixture_dir("ignored") / "kforge_fixture_unprefixed.so"));
  ASSERT_TRUE(fs::is_directory(fixture_dir("ignored") / "libkforge_subdir.so"));
  const auto set = discover_fixtures({"ignored"});
  EXPECT_TRUE(set.files().empty()) << set.errors();
}

TEST(PluginDiscovery, LibrariesStayLoadedAfterTheSetIsGone) {
  const std::string path = fixture_file("sorted", "libkforge_fixture_b_second.so");
  const kforge_plugin_info* info = nullptr;
  {
    const auto set = discover_fixtures({"sorted"});
    ASSERT_EQ(set.files().size(), 3u);
    info = set.files()[1].info;
    ASSERT_NE(info, nullptr);
  }
  // RTLD_NOLOAD returns a handle only if the library is still resident.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << path << " was unloaded";
  dlclose(handle);  // drops only the reference RTLD_NOLOAD added
  EXPECT_STREQ(info->name, "fixture-sorted_b_second");  // static data of the plugin is still mapped
}

}  // namespace
}  // namespace kforge::test
