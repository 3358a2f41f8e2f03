// The kforge binary with broken plugin directories: list-plugins shows refused rows and exits 0;
// run refuses to start (exit 2) before reading data or writing anything.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/plugins/fixtures.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

std::string kforge(const std::string& args) { return std::string(KFORGE_BIN) + " " + args; }
std::string dir_arg(const std::string& fixture) { return "--plugin-dir " + fixture_dir(fixture).string(); }

TEST(PluginCli, ListPluginsShowsAGoodPluginsComponentsAndKeys) {
  std::string out;
  ASSERT_EQ(run_command(kforge("list-plugins -v " + dir_arg("good")), &out), 0) << out;
  expect_has(out, {"fixture_sgd", "fixture_counter", "libkforge_fixture_good.so", "SGD for loader tests",
                   "[optimizer] fixture_sgd_dampening (float, default 0.0)", "[optimizer] lr (float, default",
                   "[train] fixture_counter_every (int, default 1)"});
  EXPECT_EQ(out.find("REFUSED"), std::string::npos) << out;
}

TEST(PluginCli, ListPluginsShowsTheDeclaredCapabilities) {
  std::string out;
  ASSERT_EQ(run_command(kforge("list-plugins -v"), &out), 0) << out;
  // The line under an optimizer's row.
  const auto line_after = [&out](const std::string& name) {
    const size_t row = out.find("optimizer          " + name + " ");
    if (row == std::string::npos) return "(" + name + " is not listed)";
    const size_t start = out.find('\n', row) + 1;
    return out.substr(start, out.find('\n', start) - start);
  };
  EXPECT_EQ(line_after("muon"), std::string(20, ' ') + "capabilities: needs_whole_matrices") << out;
  EXPECT_EQ(line_after("schedule_free_adamw"), std::string(20, ' ') + "capabilities: has_eval_weights") << out;
  EXPECT_EQ(line_after("adamw").find("capabilities"), std::string::npos) << out;

  ASSERT_EQ(run_command(kforge("list-plugins --json"), &out), 0) << out;
  std::map<std::string, nlohmann::json> capabilities;
  for (const auto& file : nlohmann::json::parse(out)) {
    for (const auto& c : file["components"]) capabilities[c["name"]] = c["capabilities"];
  }
  EXPECT_EQ(capabilities["muon"], nlohmann::json::array({"needs_whole_matrices"}));
  EXPECT_EQ(capabilities["schedule_free_adamw"], nlohmann::json::array({"has_eval_weights"}));
  EXPECT_EQ(capabilities["adamw"], nlohmann::json::array());
  // kforge convert maps it; it takes packed sequences and embedding prefixes, shards its experts, splits its layers,
  // runs as pipeline stages and computes its linear layers in float8
  EXPECT_EQ(capabilities["transformer"],
            nlohmann::json::array({"llama_layout", "document_mask", "embedding_prefix", "expert_parallel",
                                   "tensor_parallel", "pipeline", "float8"}));
  // the cross-entropy losses read vocabulary-split logits
  EXPECT_EQ(capabilities["cross_entropy"], nlohmann::json::array({"tensor_parallel"}));
}

TEST(PluginCli, ListPluginsShowsTheKeyThatEnablesAComponent) {
  std::string out;
  ASSERT_EQ(run_command(kforge("list-plugins -v"), &out), 0) << out;
  expect_has(out, {"metric_backend     tensorboard ", "enabled by: [metrics] enable_tensorboard = true"});
  ASSERT_EQ(run_command(kforge("list-plugins --json"), &out), 0) << out;
  std::map<std::string, nlohmann::json> enabled_by;
  for (const auto& file : nlohmann::json::parse(out)) {
    for (const auto& c : file["components"]) enabled_by[c["name"]] = c["enabled_by"];
  }
  EXPECT_EQ(enabled_by["tensorboard"], "enable_tensorboard");
  EXPECT_EQ(enabled_by["jsonl"], "");
}

TEST(PluginCli, ListPluginsShowsAModelsHookPoints) {
  std::string out;
  ASSERT_EQ(run_command(kforge("list-plugins -v"), &out), 0) << out;
  expect_has(out, {"model              transformer ",
                   "hook points (kforge extract): embed, layers.{layer}.attention_norm, layers.{layer}.attention, "
                   "layers.{layer}.attn_out, layers.{layer}.mlp_norm, layers.{layer}.mlp_out, layers.{layer}.residual, "
                   "layers.{layer}.mlp.router.choices, layers.{layer}.mlp.router.weights, "
                   "layers.{layer}.mlp.router.expert_counts, final_norm"});
  ASSERT_EQ(run_command(kforge("list-plugins --json"), &out), 0) << out;
  std::map<std::string, nlohmann::json> points;
  for (const auto& file : nlohmann::json::parse(out)) {
    for (const auto& c : file["components"]) points[c["name"]] = c["hook_points"];
  }
  EXPECT_EQ(points["transformer"].size(), 11u) << points["transformer"];
  EXPECT_EQ(points["transformer"][0], "embed");
  EXPECT_EQ(points["adamw"], nlohmann::json::array());
}

TEST(PluginCli, ListPluginsShowsEachRefusedFileAsARowWithItsReasonAndExitsZero) {
  std::string out;
  const std::string dirs = dir_arg("wrong_torch") + " " + dir_arg("not_so") + " " + dir_arg("undefined_symbol") +
                           " " + dir_arg("register_throws") + " " + dir_arg("duplicate");
  ASSERT_EQ(run_command(kforge("list-plugins " + dirs), &out), 0) << out;
  expect_has(out,
             {"REFUSED: " + fixture_file("wrong_torch", "libkforge_wrong_torch.so") + ": built against LibTorch 2.3.0",
              "REFUSED: " + fixture_file("not_so", "libkforge_notso.so") + ": not a loadable shared library",
              "REFUSED: " + fixture_file("undefined_symbol", "libkforge_undefined_symbol.so") +
                  ": cannot load: undefined symbol",
              "register_all failed: fixture registration exploded",
              "already provided by " + fixture_file("duplicate", "libkforge_fixture_dup_a.so")});
  // The accepted duplicate is listed as a component row.
  expect_has(out, {"fixture_dup"});
}

TEST(PluginCli, ListPluginsJsonMarksRefusedFiles) {
  std::string out;
  ASSERT_EQ(run_command(kforge("list-plugins --json " + dir_arg("cuda") + " 2>/dev/null"), &out), 0) << out;
  const auto json = nlohmann::json::parse(out);
  bool found = false;
  for (const auto& file : json) {
    if (file["file"] != fixture_file("cuda", "libkforge_cuda.so")) continue;
    found = true;
    EXPECT_EQ(file["status"], "refused");
    EXPECT_NE(file["error"].get<std::string>().find("built for a CUDA LibTorch"), std::string::npos);
  }
  EXPECT_TRUE(found) << out;
}

TEST(PluginCli, RunWithABrokenPluginExitsTwoBeforeTraining) {
  const fs::path dir = temp_dir("cli_broken_plugin");
  const fs::path checkpoints = dir / "ckpt";
  std::ofstream(dir / "cfg.toml") << "[train]\nmax_steps = 2\n[checkpoint]\ndir = \"" << checkpoints.string()
                                  << "\"\n";
  for (const std::string fixture : {"register_throws", "wrong_abi", "not_so"}) {
    std::string out;
    EXPECT_EQ(run_command(kforge("run " + (dir / "cfg.toml").string() + " " + dir_arg(fixture)), &out), 2)
        << fixture << ":\n" << out;
    expect_has(out, {fixture_dir(fixture).filename().string(), "kforge run: refusing to start"});
    EXPECT_FALSE(fs::exists(checkpoints)) << "training started with " << fixture;
  }
  std::string out;
  run_command(kforge("run " + (dir / "cfg.toml").string() + " " + dir_arg("register_throws")), &out);
  expect_has(out, {fixture_file("register_throws", "libkforge_fixture_register_throws.so") +
                   ": register_all failed: fixture registration exploded"});
  fs::remove_all(dir);
}

TEST(PluginCli, RunWithAMissingPluginDirectoryExitsTwo) {
  std::string out;
  EXPECT_EQ(run_command(kforge("run cfg.toml --plugin-dir " + fixture_dir("no_such_directory").string()), &out), 2);
  expect_has(out, {"plugin directory '" + fixture_dir("no_such_directory").string() + "' does not exist"});
}

TEST(PluginCli, ADuplicateOfABuiltInIsRefusedAndTheBuiltInStaysListed) {
  // The test binary depends on the built-in plugins, so they are built: their absence is a failure.
  std::string listing;
  run_command(kforge("list-plugins"), &listing);
  ASSERT_NE(listing.find("adamw"), std::string::npos) << "no built-in optimizer 'adamw' in:\n" << listing;
  const fs::path dir = temp_dir("cli_duplicate_builtin");
  std::ofstream(dir / "cfg.toml") << "[train]\nmax_steps = 2\n";
  const std::string newcomer = fixture_file("duplicate_builtin", "libkforge_fixture_dup_builtin.so");
  std::string out;
  EXPECT_EQ(run_command(kforge("run " + (dir / "cfg.toml").string() + " " + dir_arg("duplicate_builtin")), &out), 2);
  // --plugin-dir comes first, yet the newcomer is the file refused, naming the built-in file.
  expect_has(out, {newcomer + ": optimizer 'adamw' is already provided by ", "/libkforge_", "refusing to start"});
  ASSERT_EQ(run_command(kforge("list-plugins " + dir_arg("duplicate_builtin")), &out), 0) << out;
  expect_has(out, {"REFUSED: " + newcomer + ": optimizer 'adamw' is already provided by "});
  const size_t adamw_row = out.find("optimizer          adamw ");
  ASSERT_NE(adamw_row, std::string::npos) << "the built-in adamw is no longer listed:\n" << out;
  EXPECT_NE(out.substr(adamw_row, out.find('\n', adamw_row) - adamw_row).find("libkforge_"), std::string::npos);
  EXPECT_EQ(out.substr(adamw_row, out.find('\n', adamw_row) - adamw_row).find("fixture_dup_builtin"), std::string::npos)
      << out;
  fs::remove_all(dir);
}

TEST(PluginCli, AWorldWritablePluginDirectoryIsRefusedUnlessAllowed) {
  const fs::path dir = fs::canonical(temp_dir("cli_world_writable"));
  fs::copy_file(fixture_dir("good") / "libkforge_fixture_good.so", dir / "libkforge_fixture_good.so");
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  std::string out;
  ASSERT_EQ(run_command(kforge("list-plugins --plugin-dir " + dir.string()), &out), 0) << out;
  expect_has(out, {"REFUSED: " + (dir / "libkforge_fixture_good.so").string() + ": not opened: the plugin directory " +
                       dir.string() + " is writable by every user",
                   "--allow-unsafe-plugin-dir"});
  EXPECT_EQ(out.find("fixture_sgd"), std::string::npos) << out;
  ASSERT_EQ(run_command(kforge("list-plugins --allow-unsafe-plugin-dir --plugin-dir " + dir.string()), &out), 0) << out;
  expect_has(out, {"fixture_sgd"});
  EXPECT_EQ(out.find("REFUSED"), std::string::npos) << out;
  std::ofstream(dir / "cfg.toml") << "[train]\nmax_steps = 2\n";
  EXPECT_EQ(run_command(kforge("run " + (dir / "cfg.toml").string() + " --plugin-dir " + dir.string()), &out), 2);
  expect_has(out, {"is writable by every user", "refusing to start"});
  fs::remove_all(dir);
}

TEST(PluginCli, TheAllowUnsafeFlagIsInTheHelpOfEveryCommandThatTakesPluginDirs) {
  for (const std::string command : {"run", "list-plugins", "launch", "eval", "generate"}) {
    std::string out;
    EXPECT_EQ(run_command(kforge(command + " --help"), &out), 0) << out;
    expect_has(out, {"--allow-unsafe-plugin-dir"});
  }
}

}  // namespace
}  // namespace kforge::test
