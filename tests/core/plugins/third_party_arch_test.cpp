// A third party's [vlm] arch (tests/fixtures/vlm_arch.cpp) through the SDK alone: the host lists it with its keys and
// rule, resolves its keys with their defaults, enforces their declared ranges and values, runs its rule while the
// config loads and once the world size is known (reported as kforge reports its own: file, line, key and value),
// and warns about its no-effect key.
#include <gtest/gtest.h>

#include <algorithm>

#include "config/job_config.h"
#include "config/support_check.h"
#include "fixtures.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

const plugins::PluginHost& host() {
  static const std::unique_ptr<plugins::PluginHost> h = load_builtin_plugins({fixture_dir("vlm_arch").string()});
  return *h;
}

// [vlm] header on line 4: arch on line 5, the tests' keys from line 6 on.
const std::string kArch = "[model]\nn_layers = 4\n[vision_encoder]\n[vlm]\narch = \"fixture_arch\"\n";

std::string load_error(const std::string& toml) {
  try {
    job_from_toml(toml, host().registry);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "config loaded without error:\n" << toml;
  return "";
}

const plugins::ComponentMeta* fixture_arch() {
  for (const plugins::PluginFile& f : host().set.files()) {
    for (const plugins::ComponentMeta& c : f.components) {
      if (f.ok && c.kind == "modality_strategy" && c.name == "fixture_arch") return &c;
    }
  }
  return nullptr;
}

TEST(ThirdPartyArch, IsListedWithItsKeysTheKeyItReadsAndItsRule) {
  const plugins::ComponentMeta* c = fixture_arch();
  ASSERT_NE(c, nullptr);
  std::vector<std::string> keys;
  for (const plugins::ConfigKeyMeta& k : c->keys) keys.push_back(k.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"fixture_tower_layers", "fixture_pool", "fixture_group", "fixture_legacy"}));
  EXPECT_EQ(c->core_keys, std::vector<std::string>{"max_text_len"});
  EXPECT_EQ(c->keys[0].allowed, "1..64");
  EXPECT_EQ(c->keys[3].status, KFORGE_KEY_NO_EFFECT);
  EXPECT_NE(c->validate, nullptr);
}

TEST(ThirdPartyArch, ItsKeysResolveWithTheirDefaultsBesideTheBaseKeys) {
  const config::JobConfig job = job_from_toml(kArch + "fixture_pool = \"max\"\n", host().registry);
  const config::Value& vlm = *job.tree.find("vlm");
  EXPECT_EQ(vlm.find("fixture_tower_layers")->i, 2);
  EXPECT_EQ(vlm.find("fixture_pool")->s, "max");
  EXPECT_EQ(vlm.find("fixture_group")->i, 1);
  EXPECT_EQ(vlm.find("max_text_len")->i, 512);
}

TEST(ThirdPartyArch, ItsDeclaredRangeAndValuesAreEnforced) {
  expect_has(load_error(kArch + "fixture_tower_layers = 0\n"),
             {"test.toml:6:24: [vlm] fixture_tower_layers = 0: must be in [1, 64]"});
  expect_has(load_error(kArch + "fixture_group = 0\n"), {"test.toml:6:17: [vlm] fixture_group = 0: must be >= 1"});
  expect_has(load_error(kArch + "fixture_pool = \"median\"\n"),
             {"test.toml:6:16: [vlm] fixture_pool = \"median\": allowed values are mean, max"});
}

TEST(ThirdPartyArch, ItsRuleIsReportedAtTheKeyWithItsValue) {
  expect_has(load_error(kArch + "fixture_tower_layers = 8\n"),
             {"test.toml:6:24: [vlm] fixture_tower_layers = 8: must be <= [model] n_layers (4)"});
  // A defaulted key is reported at its table, the [vlm] header.
  expect_has(load_error("[model]\nn_layers = 1\n[vision_encoder]\n[vlm]\narch = \"fixture_arch\"\n"),
             {"test.toml:4:1: [vlm] fixture_tower_layers = 2: must be <= [model] n_layers (1)"});
}

TEST(ThirdPartyArch, ItsWorldRuleRunsOnceTheWorldSizeIsKnown) {
  const config::JobConfig job = job_from_toml(kArch + "fixture_group = 2\n", host().registry);  // loads: no world yet
  EXPECT_NO_THROW(config::check_world(job, 2));
  try {
    config::check_world(job, 3);
    ADD_FAILURE() << "check_world(3) passed with fixture_group = 2";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"test.toml:6:17: [vlm] fixture_group = 2: must divide the world size (3)"});
  }
}

TEST(ThirdPartyArch, ItsNoEffectKeyWarnsWithItsReason) {
  const config::JobConfig job = job_from_toml(kArch + "fixture_legacy = true\n", host().registry);
  const std::vector<std::string> warnings = config::check_support(job.tree, job.schema);
  ASSERT_EQ(warnings.size(), 1u);
  expect_has(warnings[0],
             {"test.toml:6:18: [vlm] fixture_legacy = true: has no effect in this kforge: the fixture has no legacy path"});
}

TEST(ThirdPartyArch, ItsKeysUnderAnotherArchNameIt) {
  expect_has(load_error("[vision_encoder]\n[vlm]\nfixture_pool = \"max\"\n"),
             {"unknown key 'fixture_pool' in [vlm]: it is accepted by modality_strategy 'fixture_arch' "
              "(libkforge_fixture_vlm_arch.so), which this config does not select (set [vlm] arch = \"fixture_arch\" "
              "to use it)"});
}

// The second fixture arch: the text alone in its residual stream, and a module alias of its own.
const std::string kTextArch = "[model]\nmax_seq_len = 600\n[vision_encoder]\nnum_tokens = 196\n[vlm]\n";

TEST(ThirdPartyArch, ATextResidualArchLeavesTheImageTokensOutOfTheSequenceBudget) {
  // 196 image tokens + 512 text = 708 > 600: the image tokens count for an arch without the capability...
  expect_has(load_error(kTextArch + "arch = \"fixture_arch\"\nfixture_tower_layers = 1\n"),
             {"test.toml:2:15: [model] max_seq_len = 600",
              "insufficient for the VLM: residual_image_tokens (196) + vlm.max_text_len (512) = 708"});
  // ...and not for one that declares KFORGE_CAP_TEXT_RESIDUAL, once the world size is known too.
  const config::JobConfig job =
      job_from_toml(kTextArch + "arch = \"fixture_text_arch\"\n[train]\nseq_len = 600\n", host().registry);
  EXPECT_NO_THROW(config::check_world(job, 1));
  EXPECT_EQ(job.tree.find("vlm")->find("fixture_text_every")->i, 2);
}

TEST(ThirdPartyArch, ItsModuleAliasJoinsTheBaseAliases) {
  const config::JobConfig job = job_from_toml(kTextArch + "arch = \"fixture_text_arch\"\n", host().registry);
  EXPECT_EQ(job.tree.find("vlm")->find("module_patterns")->to_toml(),
            "{ adapter = [\"adapter\", \"adapter.*\"], fixture_text = [\"transformer.fixture_blocks\"], transformer = "
            "[\"transformer\", \"transformer.*\"], vision_encoder = [\"vision_encoder\", \"vision_encoder.*\"] }");
  // Another arch's config has no such alias.
  const config::JobConfig other = job_from_toml(kArch, host().registry);
  EXPECT_EQ(other.tree.find("vlm")->find("module_patterns")->find("fixture_text"), nullptr);
}

TEST(ThirdPartyArch, AKeyOfAnotherArchOfItsPluginNamesThatArch) {
  expect_has(load_error(kTextArch + "arch = \"fixture_text_arch\"\nfixture_pool = \"max\"\n"),
             {"test.toml:7:16: key 'fixture_pool' is not valid in [vlm]: it belongs to [vlm] arch = \"fixture_arch\", "
              "and this config has arch = \"fixture_text_arch\". Set arch = \"fixture_arch\" or remove the key."});
}

}  // namespace
}  // namespace kforge::test
