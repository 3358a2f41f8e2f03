// Plugin directories and files another user could write to, or that lie below a directory another user could
// write to, are refused unopened (a plugin runs with the trainer's rights), naming the path, why and the fix, unless
// allow_unsafe.
#include <gtest/gtest.h>
#include <grp.h>
#include <pwd.h>
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

// <top>/mid/plugins, the plugin directory (0755, with a copy of the good fixture plugin); <top> and <top>/mid 0755.
struct NestedPluginDir {
  fs::path top, mid, dir;
};
NestedPluginDir nested_plugin_copy(const std::string& label) {
  NestedPluginDir n;
  n.top = fs::canonical(temp_dir(label));
  n.mid = n.top / "mid";
  n.dir = n.mid / "plugins";
  fs::create_directories(n.dir);
  fs::copy_file(fixture_dir("good") / "libkforge_fixture_good.so", n.dir / "libkforge_fixture_good.so");
  for (const fs::path& d : {n.top, n.mid, n.dir}) EXPECT_EQ(::chmod(d.c_str(), 0755), 0);
  return n;
}

TEST(PluginPermissions, AWorldWritableDirectoryTwoLevelsAboveIsRefusedNamingIt) {
  const NestedPluginDir n = nested_plugin_copy("plugins_world_writable_above");
  ASSERT_EQ(::chmod(n.top.c_str(), 0777), 0);
  expect_has(permissions_refusal(n.dir),
             {"not opened: the directory " + n.top.string() + " above the plugin directory " + n.dir.string() +
                  " is writable by every user (mode 0777, no sticky bit): chmod o-w " + n.top.string(),
              "--allow-unsafe-plugin-dir"});
  EXPECT_TRUE(permissions_accepted(n.dir, true));
  fs::remove_all(n.top);
}

TEST(PluginPermissions, AWorldWritableDirectoryAboveWithTheStickyBitIsAccepted) {
  const NestedPluginDir n = nested_plugin_copy("plugins_sticky_above");
  ASSERT_EQ(::chmod(n.mid.c_str(), 01777), 0);
  EXPECT_TRUE(permissions_accepted(n.dir, false));
  fs::remove_all(n.top);
}

TEST(PluginPermissions, ADirectoryAboveOwnedByAnotherUserIsRefused) {
  ASSERT_EQ(::geteuid(), 0u) << "this test chowns a directory to another user, which needs root";
  const NestedPluginDir n = nested_plugin_copy("plugins_other_owner_above");
  ASSERT_EQ(::chown(n.mid.c_str(), 12345, static_cast<gid_t>(-1)), 0);
  expect_has(permissions_refusal(n.dir), {"the directory " + n.mid.string() + " above the plugin directory " +
                                          n.dir.string() + " is owned by uid 12345, neither you (uid 0) nor root"});
  EXPECT_TRUE(permissions_accepted(n.dir, true));
  fs::remove_all(n.top);
}

// The primary group of a user other than root and this one (whose members may write what the group may).
gid_t group_with_another_member() {
  ::setpwent();
  gid_t gid = 0;
  while (const passwd* p = ::getpwent()) {
    if (p->pw_uid != 0 && p->pw_uid != ::geteuid() && p->pw_gid != 0) {
      gid = p->pw_gid;
      break;
    }
  }
  ::endpwent();
  return gid;
}

TEST(PluginPermissions, AGroupWritableDirectoryAboveIsRefusedWhenAnotherUserIsInTheGroup) {
  ASSERT_EQ(::geteuid(), 0u) << "this test gives a directory to another group, which needs root";
  const gid_t gid = group_with_another_member();
  ASSERT_NE(gid, 0u) << "no user other than root in /etc/passwd";
  const NestedPluginDir n = nested_plugin_copy("plugins_group_writable_above");
  ASSERT_EQ(::chown(n.mid.c_str(), static_cast<uid_t>(-1), gid), 0);
  ASSERT_EQ(::chmod(n.mid.c_str(), 0775), 0);
  expect_has(permissions_refusal(n.dir),
             {"the directory " + n.mid.string() + " above the plugin directory " + n.dir.string() +
                  " is writable by group ",
              "(gid " + std::to_string(gid) + ", mode 0775, no sticky bit), which has another member, user ",
              ": chmod g-w " + n.mid.string()});
  fs::remove_all(n.top);
}

TEST(PluginPermissions, AGroupWritableDirectoryAboveIsAcceptedWhenTheGroupHasNoOtherMember) {
  gid_t unused = 54321;  // a gid no group names and no user has: its members are root and this user at most
  const auto someones = [](gid_t gid) {
    bool found = ::getgrgid(gid) != nullptr;
    ::setpwent();
    while (const passwd* p = ::getpwent()) found = found || p->pw_gid == gid;
    ::endpwent();
    return found;
  };
  while (someones(unused)) ++unused;
  const NestedPluginDir n = nested_plugin_copy("plugins_group_alone_above");
  ASSERT_EQ(::chown(n.mid.c_str(), static_cast<uid_t>(-1), unused), 0);
  ASSERT_EQ(::chmod(n.mid.c_str(), 0775), 0);
  EXPECT_TRUE(permissions_accepted(n.dir, false));
  fs::remove_all(n.top);
}

// A plugin file that is a symlink is judged where it really is: below the directories above its target.
TEST(PluginPermissions, APluginSymlinkIntoAWorldWritableTreeIsRefusedNamingTheDirectoryAbove) {
  const NestedPluginDir n = nested_plugin_copy("plugins_symlink_target");
  const fs::path links = permissions_plugin_copy("plugins_symlink_dir", 0755);
  fs::remove(links / "libkforge_fixture_good.so");
  fs::create_symlink(n.dir / "libkforge_fixture_good.so", links / "libkforge_fixture_good.so");
  ASSERT_EQ(::chmod(n.top.c_str(), 0777), 0);
  expect_has(permissions_refusal(links),
             {"the directory " + n.top.string() + " above the plugin file " +
              (n.dir / "libkforge_fixture_good.so").string() + " is writable by every user"});
  fs::remove_all(n.top);
  fs::remove_all(links);
}

}  // namespace
}  // namespace kforge::test
