// Parameter freezing (core/train/freeze.h): fnmatch over full names, idempotent flips and counts, aliases,
// unknown-pattern errors, schedules (last write wins), canonical checkpoint metadata and its comparison,
// and the [train] freeze keys read from a config.
#include "train/freeze.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using train::FreezeSpec;
using train::FreezeStage;

std::vector<sdk::NamedParameter> model_params() {
  auto p = [](const char* name, std::vector<int64_t> shape) {
    return sdk::NamedParameter{name, at::zeros(shape, at::kFloat).set_requires_grad(true)};
  };
  return {p("embedding.weight", {8, 2}),   p("layers.0.attention.wq.weight", {2, 2}),
          p("layers.1.mlp.w1.weight", {3, 2}), p("layers.10.norm.weight", {2}),
          p("norm.weight", {2}),               p("output_head.weight", {8, 2})};
}

std::vector<std::string> trainable(const std::vector<sdk::NamedParameter>& params) {
  std::vector<std::string> names;
  for (const auto& p : params) {
    if (p.tensor.requires_grad()) names.push_back(p.name);
  }
  return names;
}

FreezeSpec spec(const std::string& module, bool frozen, const std::string& key = "train.freeze[0].module") {
  return {module, frozen, key, "cfg.toml:3:10"};
}

TEST(FreezeParams, FnmatchOverFullNamesStarCrossesDots) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"layers.*", {"embedding.weight", "norm.weight", "output_head.weight"}},
      {"layers.1*", {"embedding.weight", "layers.0.attention.wq.weight", "norm.weight", "output_head.weight"}},
      {"layers.?.*", {"embedding.weight", "layers.10.norm.weight", "norm.weight", "output_head.weight"}},
      {"layers.[01].*", {"embedding.weight", "layers.10.norm.weight", "norm.weight", "output_head.weight"}},
      {"*norm.weight", {"embedding.weight", "layers.0.attention.wq.weight", "layers.1.mlp.w1.weight",
                        "output_head.weight"}},
      {"norm.weight", {"embedding.weight", "layers.0.attention.wq.weight", "layers.1.mlp.w1.weight",
                       "layers.10.norm.weight", "output_head.weight"}},
      {"layers", {"embedding.weight", "layers.0.attention.wq.weight", "layers.1.mlp.w1.weight",
                  "layers.10.norm.weight", "norm.weight", "output_head.weight"}},  // no prefix matching
  };
  for (const auto& [pattern, left] : cases) {
    auto params = model_params();
    train::freeze_params(params, {pattern}, true);
    EXPECT_EQ(trainable(params), left) << pattern;
  }
}

TEST(FreezeParams, CountsFlippedElementsIsIdempotentAndDropsGradients) {
  auto params = model_params();
  params[1].tensor.mutable_grad() = at::ones({2, 2});
  // layers.0 (4) + layers.1 (6) + layers.10 (2) elements.
  EXPECT_EQ(train::freeze_params(params, {"layers.*"}, true), 12);
  EXPECT_FALSE(params[1].tensor.grad().defined()) << "a frozen parameter keeps no gradient";
  EXPECT_EQ(train::freeze_params(params, {"layers.*"}, true), 0) << "already frozen";
  EXPECT_EQ(train::freeze_params(params, {"layers.1*"}, false), 8);
  EXPECT_EQ(train::freeze_params(params, {"layers.1*"}, false), 0);
  EXPECT_EQ(trainable(params), (std::vector<std::string>{"embedding.weight", "layers.1.mlp.w1.weight",
                                                         "layers.10.norm.weight", "norm.weight", "output_head.weight"}));
}

TEST(ApplyFreezeSpecs, AppliesInOrderWithAliasesAndCountsPerModule) {
  auto params = model_params();
  const train::ModuleAliases aliases = {{"transformer", {"layers", "layers.*"}}, {"vision_encoder", {"vision.*"}}};
  const auto counts = train::apply_freeze_specs(
      params, {spec("transformer", true), spec("layers.1.*", false), spec("vision_encoder", true), spec("*head*", true)},
      aliases);
  EXPECT_EQ(counts, (std::map<std::string, int64_t>{{"transformer", 12}, {"layers.1.*", 6}, {"vision_encoder", 0},
                                                    {"*head*", 16}}));
  EXPECT_EQ(trainable(params), (std::vector<std::string>{"embedding.weight", "layers.1.mlp.w1.weight", "norm.weight"}));
}

TEST(ApplyFreezeSpecs, PatternMatchingNoParameterNamesKeyPatternAndPrefixes) {
  auto params = model_params();
  const std::string message = config_error_of([&] {
    train::apply_freeze_specs(params, {spec("layers.*", true), spec("layer.0.*", true, "train.freeze[1].module")}, {});
  });
  expect_has(message, {"cfg.toml:3:10", "train.freeze[1].module = \"layer.0.*\"", "matches no parameter",
                       "embedding.*, layers.*, norm.*, output_head.*", "Did you mean 'layers.0.*'?"});
  EXPECT_EQ(trainable(params).size(), params.size()) << "nothing is applied when a spec is wrong";
}

TEST(ApplyFreezeSpecs, CheckPlanRejectsATypoInALateStage) {
  const auto params = model_params();
  train::FreezePlan plan;
  plan.base = {spec("embedding.*", true)};
  plan.schedule = {{100, {spec("output_haed.*", false, "train.freeze_schedule[0].specs[0].module")}}};
  const std::string message = config_error_of([&] { train::check_freeze_plan(params, plan); });
  expect_has(message, {"train.freeze_schedule[0].specs[0].module = \"output_haed.*\"", "Did you mean 'output_head.*'?"});
  EXPECT_EQ(trainable(params).size(), params.size()) << "checking changes nothing";
}

TEST(EffectiveFreeze, StagesUpToStepApplyInOrderLastWriteWins) {
  const std::vector<FreezeSpec> base = {spec("a", true), spec("b", true)};
  const std::vector<FreezeStage> schedule = {{10, {spec("a", false), spec("c", true)}}, {20, {spec("a", true)}},
                                             {30, {spec("b", false), spec("b", true)}}};
  auto summary = [&](int64_t step) {
    std::string out;
    for (const FreezeSpec& s : train::effective_freeze(step, base, schedule)) out += s.module + (s.frozen ? "+ " : "- ");
    return out;
  };
  EXPECT_EQ(summary(0), "a+ b+ ");
  EXPECT_EQ(summary(9), "a+ b+ ");
  EXPECT_EQ(summary(10), "a- b+ c+ ");
  EXPECT_EQ(summary(19), "a- b+ c+ ");
  EXPECT_EQ(summary(20), "a+ b+ c+ ");
  EXPECT_EQ(summary(1000), "a+ b+ c+ ");
}

TEST(EffectiveFreeze, ReapplyingAtAResumedStepGivesTheContinuousRunsFlags) {
  const std::vector<FreezeSpec> base = {spec("layers.*", true)};
  const std::vector<FreezeStage> schedule = {{5, {spec("layers.1*", false)}}, {8, {spec("norm.weight", true)}}};
  auto continuous = model_params();
  for (int64_t step = 0; step <= 9; ++step) {
    train::apply_freeze_specs(continuous, train::effective_freeze(step, base, schedule), {});
  }
  auto resumed = model_params();
  train::apply_freeze_specs(resumed, train::effective_freeze(9, base, schedule), {});
  EXPECT_EQ(trainable(resumed), trainable(continuous));
  EXPECT_EQ(trainable(resumed), (std::vector<std::string>{"embedding.weight", "layers.1.mlp.w1.weight",
                                                          "layers.10.norm.weight", "output_head.weight"}));
}

TEST(FrozenThroughout, OnlyWhatEveryStageKeepsFrozenThroughAliasesAndPatterns) {
  train::FreezePlan plan;
  plan.aliases = {{"vision_encoder", {"vision_encoder", "vision_encoder.*"}}};
  plan.base = {spec("vision_encoder", true), spec("layers.*", true)};
  plan.schedule = {{5, {spec("layers.1.*", false)}}, {9, {spec("layers.*", true)}}};
  EXPECT_TRUE(train::frozen_throughout("vision_encoder.blocks.0.weight", plan));
  EXPECT_TRUE(train::frozen_throughout("layers.0.attention.wq.weight", plan));
  EXPECT_FALSE(train::frozen_throughout("layers.1.mlp.w1.weight", plan)) << "trained from step 5 to step 9";
  EXPECT_FALSE(train::frozen_throughout("norm.weight", plan)) << "no spec names it";
  plan.schedule.push_back({20, {spec("vision_encoder", false)}});
  EXPECT_FALSE(train::frozen_throughout("vision_encoder.blocks.0.weight", plan)) << "a late stage trains it";
}

TEST(CanonicalFreezeMeta, SortedDeduplicatedAndOrderInvariant) {
  const auto a = train::canonical_freeze_meta({spec("b", false), spec("a", true), spec("b", true)});
  const auto b = train::canonical_freeze_meta({spec("a", true), spec("b", true)});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.dump(), R"([{"frozen":true,"module":"a"},{"frozen":true,"module":"b"}])");
  EXPECT_EQ(train::canonical_freeze_meta({}).dump(), "[]");
}

TEST(CheckFreezeMeta, MismatchNamesModulesCheckpointAndTheIgnoreKey) {
  const auto saved = train::canonical_freeze_meta({spec("adapter", true), spec("layers.*", false)});
  const auto expected = train::canonical_freeze_meta({spec("layers.*", true), spec("adapter", true)});
  const std::string message =
      config_error_of([&] { train::check_freeze_meta(saved, expected, false, "ckpt/step_20"); });
  expect_has(message, {"checkpoint ckpt/step_20", "'layers.*' is trainable in the checkpoint but frozen in this config",
                       "ignore_freeze_mismatch = true"});
  EXPECT_EQ(message.find("adapter"), std::string::npos) << "only differing modules are named";
  EXPECT_NO_THROW(train::check_freeze_meta(saved, expected, true, "ckpt/step_20"));
}

TEST(CheckFreezeMeta, ComparesOnlyModulesBothNameAndAcceptsOldCheckpoints) {
  const auto saved = train::canonical_freeze_meta({spec("vision_encoder", true), spec("adapter", false)});
  const auto expected = train::canonical_freeze_meta({spec("adapter", false), spec("layers.*", true)});
  EXPECT_NO_THROW(train::check_freeze_meta(saved, expected, false, "ckpt"));
  EXPECT_NO_THROW(train::check_freeze_meta(nlohmann::json(), expected, false, "ckpt"));
  EXPECT_THROW(train::check_freeze_meta(nlohmann::json::object({{"a", 1}}), expected, false, "ckpt"), sdk::Error);
}

struct ConfigHost {
  std::unique_ptr<plugins::PluginHost> host = load_builtin_plugins();
  config::JobConfig job(const std::string& toml) { return job_from_toml(toml, host->registry); }
};

TEST(FreezeConfig, TrainKeysDefaultEmptyAndReadWithKeysAndSources) {
  ConfigHost h;
  EXPECT_TRUE(train::read_freeze_plan(h.job("[train]\n")).base.empty());
  const auto plan = train::read_freeze_plan(h.job(
      "[[train.freeze]]\nmodule = \"embedding.*\"\n"
      "[[train.freeze]]\nmodule = \"layers.0.*\"\nfrozen = true\n"
      "[[train.freeze_schedule]]\nstart_step = 0\n"
      "[[train.freeze_schedule]]\nstart_step = 10\n"
      "[[train.freeze_schedule.specs]]\nmodule = \"embedding.*\"\nfrozen = false\n"));
  ASSERT_EQ(plan.base.size(), 2u);
  EXPECT_EQ(plan.base[1].module, "layers.0.*");
  EXPECT_EQ(plan.base[1].key, "train.freeze[1].module");
  EXPECT_NE(plan.base[1].source.find(":4:"), std::string::npos) << plan.base[1].source;
  ASSERT_EQ(plan.schedule.size(), 2u);
  EXPECT_TRUE(plan.schedule[0].specs.empty());
  EXPECT_EQ(plan.schedule[1].start_step, 10);
  ASSERT_EQ(plan.schedule[1].specs.size(), 1u);
  EXPECT_FALSE(plan.schedule[1].specs[0].frozen);
  EXPECT_EQ(plan.schedule[1].specs[0].key, "train.freeze_schedule[1].specs[0].module");
  EXPECT_EQ(train::effective_freeze(10, plan).size(), 2u) << "embedding.* unfrozen in place, layers.0.* kept";
  EXPECT_FALSE(train::effective_freeze(10, plan)[0].frozen);
  EXPECT_TRUE(plan.changes_at(10));
  EXPECT_FALSE(plan.changes_at(5));
  EXPECT_TRUE(plan.aliases.empty()) << "aliases come from [vlm] module_patterns only";
}

TEST(FreezeConfig, ScheduleStartStepsMustBeNonNegativeAndStrictlyIncreasing) {
  ConfigHost h;
  expect_has(config_error_of([&] { h.job("[[train.freeze_schedule]]\nstart_step = -1\n"); }),
             {"[train.freeze_schedule[0]] start_step = -1", "must be >= 0"});
  expect_has(config_error_of([&] {
               h.job("[[train.freeze_schedule]]\nstart_step = 5\n[[train.freeze_schedule]]\nstart_step = 5\n");
             }),
             {"[train.freeze_schedule[1]] start_step = 5", "strictly monotonic"});
  expect_has(config_error_of([&] { h.job("[[train.freeze]]\nfrozen = false\n"); }),
             {"[train.freeze[0]] module is required"});
}

}  // namespace
}  // namespace kforge::test
