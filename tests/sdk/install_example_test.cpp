// cmake --install of this build tree gives a package that builds examples/custom_optimizer out of
// tree; kforge then lists the plugin, selects it with [optimizer] name and validates its key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/expect_text.h"
#include "support/test_host.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One test for the whole chain: each step needs the previous one, and installing and building
// the example once (about a minute) is the expensive part.
TEST(InstalledSdk, ExampleBuildsAgainstTheInstalledPackageAndKforgeListsAndSelectsIt) {
  const fs::path root = temp_dir("sdk_install");
  const fs::path prefix = root / "prefix";
  const fs::path build = root / "custom_optimizer";
  std::string out;

  // 1. The package: headers, the SDK library and the CMake files.
  ASSERT_EQ(run_command("cmake --install " + std::string(KFORGE_BINARY_DIR) + " --prefix " + prefix.string(), &out), 0)
      << out;
  for (const char* file :
       {"include/kforge/sdk/sdk.h", "include/kforge/sdk/abi.h", "include/kforge/sdk/version.h", "lib/libkforge_sdk.so",
        "lib/cmake/kforge/kforgeConfig.cmake", "lib/cmake/kforge/kforgeConfigVersion.cmake",
        "lib/cmake/kforge/kforgeTargets.cmake", "lib/cmake/kforge/KforgePlugin.cmake"}) {
    EXPECT_TRUE(fs::exists(prefix / file)) << file;
  }

  // 2. The example configures and builds with find_package(kforge) + kforge_add_plugin, with the
  //    host's LibTorch ABI flag and hidden visibility.
  ASSERT_EQ(run_command("cmake -S " + std::string(KFORGE_SOURCE_DIR) + "/examples/custom_optimizer -B " +
                            build.string() + " -DCMAKE_PREFIX_PATH=" + prefix.string() +
                            " -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
                        &out),
            0)
      << out;
  ASSERT_EQ(run_command("cmake --build " + build.string() + " -j2", &out), 0) << out;
  ASSERT_TRUE(fs::exists(build / "libkforge_custom_optimizer.so"));
  expect_has(read_file(build / "compile_commands.json"),
             {"sign_sgd.cpp", "-D_GLIBCXX_USE_CXX11_ABI=1", "-fvisibility=hidden", (prefix / "include").string()});

  const std::string kforge = std::string(KFORGE_BIN) + " ";
  const std::string plugin_dir = " --plugin-dir " + build.string();

  // 3. kforge lists it, with its key and the core key it declares.
  ASSERT_EQ(run_command(kforge + "list-plugins -v" + plugin_dir, &out), 0) << out;
  expect_has(out, {"sign_sgd", "libkforge_custom_optimizer.so", "[optimizer] sign_sgd_momentum (float, default 0.0)",
                   "[optimizer] lr (float, default"});
  EXPECT_EQ(out.find("REFUSED"), std::string::npos) << out;

  // 4. [optimizer] name selects it and its key is accepted; a typo of the key is refused.
  std::ofstream(root / "cfg.toml") << "[train]\nmax_steps = 10\n[optimizer]\nlr = 1e-3\n[data]\ndataset_path = \""
                                  << write_token_corpus(root / "data", 256).string() << "\"\n";
  const std::string run = kforge + "run " + (root / "cfg.toml").string() + " --dry-run" + plugin_dir +
                          " --optimizer.name=sign_sgd";
  ASSERT_EQ(run_command(run + " --optimizer.sign_sgd_momentum=0.5", &out), 0) << out;
  expect_has(out, {"name = \"sign_sgd\"", "sign_sgd_momentum = 0.5"});
  EXPECT_EQ(run_command(run + " --optimizer.sign_sgd_momentun=0.5", &out), 2) << out;
  expect_has(out, {"unknown key 'sign_sgd_momentun' in [optimizer]", "Did you mean 'sign_sgd_momentum'?"});

  if (!HasFailure()) fs::remove_all(root);  // kept for inspection otherwise
}

}  // namespace
}  // namespace kforge::test
