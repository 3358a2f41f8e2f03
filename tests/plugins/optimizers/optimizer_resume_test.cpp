// Lion, SGD, Schedule-Free AdamW and Muon: state keyed by parameter name, bit-exact resume, listed by the CLI.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "plugins/optimizers/adamw_fixture.h"
#include "plugins/optimizers/optimizer_checks.h"
#include "support/component_host.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using F = AdamWFixture;

struct ResumeCase {
  const char* name;
  std::string toml;
};

std::vector<ResumeCase> cases() {
  return {{"lion", optimizer_toml("lion", 1e-3, 0.1, 0.9, 0.99)},
          {"sgd", optimizer_toml("sgd", 1e-2, 0.1, 0.9, 0.95, "sgd_nesterov = true\n")},
          {"schedule_free_adamw", optimizer_toml("schedule_free_adamw", 1e-2, 0.1, 0.9, 0.95,
                                                 "schedule_free_warmup_steps = 2\n")},
          {"muon", optimizer_toml("muon", 2e-2, 0.1, 0.9, 0.95, "muon_adam_lr = 3e-3\n")}};
}

class EachOptimizer : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(EachOptimizer, StateIsKeyedByTrainableParameterNamesWithScalarSteps) {
  ComponentHost h(GetParam().toml);
  auto params = F::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  F::run(*opt, params, 0, 2);
  const sdk::StateDict state = opt->state_dict();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name;
    if (static_cast<int>(i) == F::kFrozen) {
      EXPECT_EQ(state.count(name + ".step"), 0u) << "frozen parameters are not in the optimizer";
      continue;
    }
    ASSERT_EQ(state.count(name + ".step"), 1u) << name;
    EXPECT_EQ(state.at(name + ".step").dim(), 0);
  }
  for (const auto& [key, value] : state) {
    bool owned = false;
    for (const auto& p : params) owned = owned || key.rfind(p.name + ".", 0) == 0;
    EXPECT_TRUE(owned) << "entry '" << key << "' is not keyed by a parameter name";
  }
  EXPECT_EQ(state.at("layers.0.unused.weight.step").item<int64_t>(), 0) << "no grad, no step";
}

TEST_P(EachOptimizer, ResumeIntoFreshOptimizerEqualsUninterruptedBitExactly) {
  expect_resume_bit_exact(GetParam().toml, at::kFloat);
}

TEST_P(EachOptimizer, ParametersWithoutGradStayBitIdentical) {
  ComponentHost h(GetParam().toml);
  auto params = F::params(at::kFloat);
  const auto before = F::copy(params);
  auto opt = h.components.optimizer(params);
  F::run(*opt, params, 0, F::kSteps);
  EXPECT_TRUE(at::equal(params[F::kUnused].tensor, before[F::kUnused].tensor));
  EXPECT_TRUE(at::equal(params[F::kFrozen].tensor, before[F::kFrozen].tensor));
}

TEST_P(EachOptimizer, ListPluginsShowsTheComponent) {
  std::string out;
  ASSERT_EQ(run_command(std::string("'") + KFORGE_BIN + "' list-plugins", &out), 0) << out;
  EXPECT_NE(out.find(GetParam().name), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, EachOptimizer, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ResumeCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kforge::test
