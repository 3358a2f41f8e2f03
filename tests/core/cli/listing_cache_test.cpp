// The listing cache: a repeated `kforge list-plugins` is printed by the front-end from the cache,
// byte for byte as kforge-host prints it, and any change to its inputs sends it back to the host.
#include "listing/listing_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/expect_text.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

struct ListingRun {
  int status;
  std::string out;  ///< stdout only
};

// A 64 MiB address-space limit: enough for the front-end, far too little for kforge-host to map
// LibTorch. A command that succeeds under it was answered without the host.
constexpr const char* kWithoutRoomForTheHost = "ulimit -v 65536; ";

fs::path sorted_fixture(const std::string& item) {
  return fs::path(KFORGE_FIXTURE_DIR) / "sorted" / ("libkforge_fixture_" + item + ".so");
}

std::vector<fs::path> entries(const fs::path& cache) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(cache)) {
    if (e.path().extension() == ".entry") out.push_back(e.path());
  }
  return out;
}

class CatalogueCache : public ::testing::Test {
 protected:
  // `kforge ARGS` with this test's cache; `prefix` is prepended to the shell command line.
  ListingRun kforge(const std::string& args, const std::string& prefix = "") const {
    ListingRun r;
    r.status = run_command("{ " + prefix + "KFORGE_CACHE_DIR='" + cache_.string() + "' '" + KFORGE_BIN + "' " + args +
                               " 2>/dev/null; }",
                           &r.out);
    return r;
  }
  ListingRun uncached(const std::string& args) const { return kforge(args, "KFORGE_NO_CATALOGUE_CACHE=1 "); }
  ListingRun without_host(const std::string& args) const { return kforge(args, kWithoutRoomForTheHost); }

  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "under AddressSanitizer the front-end itself reserves terabytes of shadow memory, so no "
                    "address-space limit can tell it from kforge-host";
#endif
    // Otherwise a passing "served from the cache" check would prove nothing.
    ASSERT_NE(kforge("list-plugins", std::string(kWithoutRoomForTheHost) + "KFORGE_NO_CATALOGUE_CACHE=1 ").status, 0)
        << "kforge-host runs under the address-space limit";
  }

  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root_);
  }

  const fs::path root_ = temp_dir("listing_cache");
  const fs::path cache_ = root_ / "cache";
  const fs::path plugins_ = root_ / "plugins";
};

TEST_F(CatalogueCache, RepeatedListingIsPrintedFromTheCacheByteForByte) {
  for (const std::string args : {"list-plugins", "list-plugins -v", "list-plugins --json"}) {
    const ListingRun reference = uncached(args);
    ASSERT_EQ(reference.status, 0) << args;
    EXPECT_NE(without_host(args).status, 0) << args << ": nothing is cached yet";
    const ListingRun first = kforge(args);
    EXPECT_EQ(first.status, 0) << args;
    EXPECT_EQ(first.out, reference.out) << args;
    const ListingRun second = without_host(args);
    EXPECT_EQ(second.status, 0) << args;
    EXPECT_EQ(second.out, reference.out) << args;
  }
  EXPECT_EQ(entries(cache_).size(), 3u);  // one per argument list
}

TEST_F(CatalogueCache, TouchedPluginSendsTheListingBackToTheHost) {
  fs::create_directories(plugins_);
  fs::copy_file(sorted_fixture("a_first"), plugins_ / "libkforge_fixture_a_first.so");
  const std::string args = "list-plugins --plugin-dir '" + plugins_.string() + "'";
  const ListingRun first = kforge(args);
  ASSERT_EQ(first.status, 0);
  expect_has(first.out, {"sorted_a_first"});
  ASSERT_EQ(without_host(args).out, first.out);

  const fs::path plugin = plugins_ / "libkforge_fixture_a_first.so";
  fs::last_write_time(plugin, fs::last_write_time(plugin) + std::chrono::seconds(1));
  EXPECT_NE(without_host(args).status, 0) << "a touched plugin was not noticed";
  const ListingRun refreshed = kforge(args);
  EXPECT_EQ(refreshed.status, 0);
  EXPECT_EQ(refreshed.out, first.out);
  EXPECT_EQ(without_host(args).out, first.out) << "the host did not refresh the entry";
}

TEST_F(CatalogueCache, NewPluginAppearsInTheNextListing) {
  fs::create_directories(plugins_);
  fs::copy_file(sorted_fixture("a_first"), plugins_ / "libkforge_fixture_a_first.so");
  const std::string args = "list-plugins -v --plugin-dir '" + plugins_.string() + "'";
  ASSERT_EQ(kforge(args).status, 0);
  ASSERT_EQ(without_host(args).status, 0);

  fs::copy_file(sorted_fixture("b_second"), plugins_ / "libkforge_fixture_b_second.so");
  const ListingRun after = kforge(args);
  EXPECT_EQ(after.status, 0);
  expect_has(after.out, {"sorted_a_first", "sorted_b_second"});
  EXPECT_EQ(after.out, uncached(args).out);
  EXPECT_EQ(without_host(args).out, after.out);

  fs::remove(plugins_ / "libkforge_fixture_a_first.so");
  const ListingRun removed = kforge(args);
  EXPECT_EQ(removed.out.find("sorted_a_first"), std::string::npos) << removed.out;
  expect_has(removed.out, {"sorted_b_second"});
}

TEST_F(CatalogueCache, RelativePluginDirIsResolvedInTheWorkingDirectory) {
  for (const std::string item : {"a_first", "b_second"}) {
    fs::create_directories(root_ / item / "plugins");
    fs::copy_file(sorted_fixture(item), root_ / item / "plugins" / ("libkforge_fixture_" + item + ".so"));
  }
  const auto in = [&](const std::string& item) { return "cd '" + (root_ / item).string() + "' && "; };
  expect_has(kforge("list-plugins --plugin-dir plugins", in("a_first")).out, {"sorted_a_first"});
  const ListingRun other = kforge("list-plugins --plugin-dir plugins", in("b_second"));
  expect_has(other.out, {"sorted_b_second"});
  EXPECT_EQ(other.out.find("sorted_a_first"), std::string::npos) << other.out;
}

TEST_F(CatalogueCache, CorruptedEntryIsIgnored) {
  const ListingRun reference = uncached("list-plugins");
  ASSERT_EQ(kforge("list-plugins").status, 0);
  const std::vector<fs::path> stored = entries(cache_);
  ASSERT_EQ(stored.size(), 1u);
  const std::string intact = read_file(stored[0]);

  std::string altered = intact;  // one byte of the stored output changed
  altered[altered.find("KIND")] = 'k';
  const std::string truncated = intact.substr(0, intact.size() / 2);
  for (const std::string& corrupt : {altered, truncated, std::string("garbage")}) {
    std::ofstream(stored[0], std::ios::binary | std::ios::trunc) << corrupt;
    EXPECT_NE(without_host("list-plugins").status, 0) << "a corrupted entry was served";
    const ListingRun r = kforge("list-plugins");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, reference.out);
  }
}

TEST_F(CatalogueCache, UnusableCacheDirectoryIsIgnored) {
  std::ofstream(root_ / "a_file") << "not a directory";
  const ListingRun reference = uncached("list-plugins");
  for (const std::string dir : {(root_ / "a_file").string(), std::string("/proc/kforge_cache")}) {
    for (int i = 0; i < 2; ++i) {
      ListingRun r;
      r.status = run_command("KFORGE_CACHE_DIR='" + dir + "' '" + KFORGE_BIN + "' list-plugins", &r.out);
      EXPECT_EQ(r.status, 0) << r.out;
      EXPECT_EQ(r.out, reference.out);  // and nothing on stderr
    }
  }
}

TEST(CatalogueFrontEnd, MissingHostIsAUsageErrorNamingIt) {
  const fs::path bin = temp_dir("frontend_alone") / "bin";
  fs::create_directories(bin);
  fs::copy_file(KFORGE_BIN, bin / "kforge");
  std::string out;
  EXPECT_EQ(run_command("cd '" + bin.string() + "' && ./kforge --version", &out), 2);
  expect_has(out, {"cannot run the kforge host", (bin / "kforge-host").string()});
  if (!HasFailure()) fs::remove_all(bin.parent_path());
}

// Help and a missing or unknown command need nothing of the host: the front-end answers them with no kforge-host next
// to it, exactly as kforge-host run directly does, and hands every command of the host on.
TEST(CatalogueFrontEnd, AnswersHelpAndUnknownCommandsWithoutTheHostAsTheHostDoes) {
  const fs::path bin = temp_dir("frontend_usage") / "bin";
  fs::create_directories(bin);
  fs::copy_file(KFORGE_BIN, bin / "kforge");
  const std::string host = (fs::path(KFORGE_BIN).parent_path() / "kforge-host").string();
  const struct {
    std::string args;
    int status;
  } cases[] = {{"--help", 0}, {"-h", 0}, {"help", 0}, {"", 2}, {"frobnicate", 2}, {"lst-plugins --json", 2}};
  for (const auto& c : cases) {
    std::string alone, direct;
    EXPECT_EQ(run_command("cd '" + bin.string() + "' && ./kforge " + c.args, &alone), c.status) << c.args << alone;
    EXPECT_EQ(run_command("'" + host + "' " + c.args, &direct), c.status) << c.args << direct;
    EXPECT_EQ(alone, direct) << c.args;
    expect_has(alone, {"Usage:", "kforge run CONFIG.toml"});
  }
  for (const char* command : {"run cfg.toml", "launch --nproc-per-node 2 run cfg.toml", "version", "check-env"}) {
    std::string out;
    EXPECT_EQ(run_command("cd '" + bin.string() + "' && ./kforge " + command, &out), 2) << command;
    expect_has(out, {"cannot run the kforge host"});
  }
  if (!HasFailure()) fs::remove_all(bin.parent_path());
}

TEST(CatalogueFrontEnd, LinksNoLibTorch) {
  std::string out;
  ASSERT_EQ(run_command(std::string("ldd '") + KFORGE_BIN + "'", &out), 0) << out;
  EXPECT_EQ(out.find("libtorch"), std::string::npos) << out;
  EXPECT_EQ(out.find("libc10"), std::string::npos) << out;
}

// ---- the fingerprint and key on their own -----------------------------------------------------

TEST(CatalogueFingerprint, ChangesWithEveryPluginChangeAndOnlyThen) {
  const fs::path dir = temp_dir("listing_fingerprint");
  const fs::path exe = KFORGE_BIN;
  const auto now = [&] { return listing::fingerprint(exe, {dir}); };
  const std::string empty = now();
  EXPECT_EQ(now(), empty);

  fs::copy_file(sorted_fixture("a_first"), dir / "libkforge_a.so");
  const std::string added = now();
  EXPECT_NE(added, empty);
  EXPECT_NE(added.find((fs::canonical(dir) / "libkforge_a.so").string()), std::string::npos) << added;
  EXPECT_EQ(now(), added);

  fs::last_write_time(dir / "libkforge_a.so", fs::last_write_time(dir / "libkforge_a.so") + std::chrono::seconds(1));
  const std::string touched = now();
  EXPECT_NE(touched, added);

  std::ofstream(dir / "libkforge_a.so", std::ios::app) << "x";
  EXPECT_NE(now(), touched);

  fs::remove(dir / "libkforge_a.so");
  EXPECT_EQ(now().find("libkforge_a.so"), std::string::npos);
  fs::remove_all(dir);
}

// A directory above a plugin directory made writable by others makes its plugins unsafe: the listing must be redone.
TEST(CatalogueFingerprint, ChangesWhenADirectoryAboveThePluginDirectoryChanges) {
  const fs::path top = fs::canonical(temp_dir("listing_fingerprint_above"));
  const fs::path dir = top / "plugins";
  fs::create_directory(dir);
  fs::copy_file(sorted_fixture("a_first"), dir / "libkforge_a.so");
  const auto now = [&] { return listing::fingerprint(KFORGE_BIN, {dir}); };
  const std::string before = now();
  EXPECT_NE(before.find("above " + top.string() + " "), std::string::npos) << before;
  ASSERT_EQ(::chmod(top.c_str(), 0777), 0);
  EXPECT_NE(now(), before);
  fs::remove_all(top);
}

TEST(CatalogueFingerprint, NamesEveryLibraryAndMissingFiles) {
  const std::string f = listing::fingerprint(std::vector<std::string>{KFORGE_BIN, "/nonexistent/libx.so"});
  EXPECT_NE(f.find(std::string("library ") + KFORGE_BIN + " "), std::string::npos) << f;
  EXPECT_NE(f.find("library /nonexistent/libx.so missing"), std::string::npos) << f;
}

TEST(CatalogueKey, DiffersPerArgumentListAndHost) {
  const auto key = [](const std::string& host, std::vector<std::string> args) { return listing::key(host, args); };
  EXPECT_EQ(key("/a/kforge-host", {"-v"}), key("/a/kforge-host", {"-v"}));
  EXPECT_NE(key("/a/kforge-host", {"-v"}), key("/a/kforge-host", {}));
  EXPECT_NE(key("/a/kforge-host", {"-v"}), key("/a/kforge-host", {"--json"}));
  EXPECT_NE(key("/a/kforge-host", {"--plugin-dir", "x"}), key("/a/kforge-host", {"--plugin-dir x"}));
  EXPECT_NE(key("/a/kforge-host", {"-v"}), key("/b/kforge-host", {"-v"}));
}

TEST(CatalogueSearchDirs, CommandLineDirsFirstThenTheShippedOne) {
  const fs::path root = temp_dir("listing_dirs");
  const fs::path host = root / "bin" / "kforge-host";
  EXPECT_EQ(listing::plugin_search_dirs({"x", "y"}, host), (std::vector<fs::path>{"x", "y"}));
  fs::create_directories(root / "lib" / "kforge" / "plugins");
  EXPECT_EQ(listing::plugin_search_dirs({"x"}, host),
            (std::vector<fs::path>{"x", root / "lib" / "kforge" / "plugins"}));
  fs::remove_all(root);
}

}  // namespace
}  // namespace kforge::test
