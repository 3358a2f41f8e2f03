// The plugin manifest the ranks compare before training: every plugin file that registered a component, and with
// hashes, each file's XXH3-64 exactly as Debian's xxhsum reads it.
#include "train/plugin_manifest.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_host.h"
#include "support/xxhsum.h"

namespace kforge::test {
namespace {

TEST(PluginManifest, HashesAreEachFilesXxh3AsXxhsumPrintsItAndOnlyWhenAsked) {
  if (!xxhsum_available()) GTEST_SKIP() << "xxhsum is not installed (scripts/setup.sh installs it)";
  const auto host = load_builtin_plugins();
  const nlohmann::json hashed = train::plugin_manifest(host->registry, /*hashes=*/true);
  const nlohmann::json plain = train::plugin_manifest(host->registry, /*hashes=*/false);
  ASSERT_GE(hashed.size(), 5u) << hashed.dump(1);
  ASSERT_EQ(plain.size(), hashed.size());
  for (size_t i = 0; i < hashed.size(); ++i) {
    const std::filesystem::path file = std::filesystem::path(KFORGE_PLUGIN_DIR) / hashed[i].at("file").get<std::string>();
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    EXPECT_EQ(hashed[i].at("hash").get<std::string>(), xxhsum_h3(file)) << file;
    EXPECT_FALSE(plain[i].contains("hash")) << plain[i].dump();
    EXPECT_EQ(plain[i].at("file"), hashed[i].at("file"));
  }
}

}  // namespace
}  // namespace kforge::test
