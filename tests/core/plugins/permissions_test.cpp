// Plugin directories and files another user could write to are refused unopened (a plugin runs
// with the trainer's rights), naming the path, why and the fix, unless allow_unsafe.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/plugins/fixtures.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

// A directory holding a copy of the good fixture plugin, with `dir_mode`; returns the directory.
fs::path permissions_plugin_copy(const std::string& label, mode_t dir_mode) {
  const fs::path dir = fs::canonical(temp_dir(label));
  fs::copy_file(fixture_dir("good") / "libkforge_fixture_good.so", dir / "libkforge_fixture_good.so");
  EXPECT_EQ(::chmod(dir.c_str(), dir_mode), 0);
  return dir;
}

// The one file of discover({dir}), refused, with its reason.
std::string permissions_refusal(const fs::path& dir) {
  const auto set = plugins::PluginSet::discover({dir});
  EXPECT_EQ(set.files().size(), 1u);
  if (set.files().empty()) return "";
  EXPECT_FALSE(set.files()[0].ok) << dir << " was accepted";
  EXPECT_EQ(set.files()[0].library, nullptr) << "an unsafe file was opened (its code ran)";
  return set.files()[0].error;
}

bool permissions_accepted(const fs::path& dir, bool allow_unsafe) {
  const auto set = plugins::PluginSet::discover({dir}, {{}, allow_unsafe});
  return set.files().size() == 1 && set.all_ok();
}

TEST(PluginPermissions, AWorldWritableDirectoryIsRefusedNamingItTheModeAndTheFlag) {
  const fs::path dir = permissions_plugin_copy("plugins_world_writable", 0777);
  expect_has(permissions_refusal(dir),
             {(dir / "libkforge_fixture_good.so").string() + ": not opened: the plugin directory " + dir.string() +
                  " is writable by every user (mode 0777, no sticky bit): chmod o-w " + dir.string(),
              "--allow-unsafe-plugin-dir"});
  EXPECT_TRUE(permissions_accepted(dir, true));
  fs::remove_all(dir);
}

TEST(PluginPermissions, AWorldWritableDirectoryWithTheStickyBitIsAccepted) {
  const fs::path dir = permissions_plugin_copy("plugins_sticky", 01777);
  EXPECT_TRUE(permissions_accepted(dir, false));
  fs::remove_all(dir);
}

TEST(PluginPermissions, AWorldWritableFileIsRefused) {
  const fs::path dir = permissions_plugin_copy("plugins_file_writable", 0755);
  const fs::path file = dir / "libkforge_fixture_good.so";
  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);
  expect_has(permissions_refusal(dir), {"the plugin file " + file.string() + " is writable by every user (mode 0666)"});
  EXPECT_TRUE(permissions_accepted(dir, true));
  fs::remove_all(dir);
}

TEST(PluginPermissions, AFileOwnedByAnotherUserIsRefused) {
  ASSERT_EQ(::geteuid(), 0u) << "this test chowns a file to another user, which needs root";
  const fs::path dir = permissions_plugin_copy("plugins_other_owner", 0755);
  const fs::path file = dir / "libkforge_fixture_good.so";
  ASSERT_EQ(::chown(file.c_str(), 12345, static_cast<gid_t>(-1)), 0);
  expect_has(permissions_refusal(dir),
             {"the plugin file " + file.string() + " is owned by uid 12345, neither you (uid 0) nor root"});
  EXPECT_TRUE(permissions_accepted(dir, true));
  fs::remove_all(dir);
}

TEST(PluginPermissions, AnOwnedDirectoryWritableOnlyByItsOwnerIsAccepted) {
  const fs::path dir = permissions_plugin_copy("plugins_safe", 0755);
  EXPECT_TRUE(permissions_accepted(dir, false));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::test
