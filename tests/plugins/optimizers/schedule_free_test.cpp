// Schedule-Free AdamW against hand-derived values (warmup, z/x/y), and its eval/train weight swap.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kforge/sdk/error.h"
#include "plugins/optimizers/adamw_fixture.h"
#include "plugins/optimizers/optimizer_checks.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

constexpr double kLr = 0.1, kWd = 0.5, kB1 = 0.9, kB2 = 0.999, kEps = 1e-8;
constexpr int kWarmup = 2;

std::string toml() {
  return optimizer_toml("schedule_free_adamw", kLr, kWd, kB1, kB2, "schedule_free_warmup_steps = 2\n");
}

struct Expected {
  std::vector<double> y, x, z;
};

// The paper's update written out per element, independent of the implementation.
Expected by_hand(const std::vector<double>& p0, const std::vector<std::vector<double>>& grads, bool decay) {
  std::vector<double> z = p0, x = p0, v(p0.size(), 0.0), y = p0;
  double weight_sum = 0;
  for (size_t step = 0; step < grads.size(); ++step) {
    const double k = static_cast<double>(step + 1);
    const double lr = kLr * std::min(1.0, k / kWarmup);
    weight_sum += lr;
    const double c = lr * (1 - kB1) / weight_sum;
    for (size_t i = 0; i < p0.size(); ++i) {
      const double g = grads[step][i];
      v[i] = kB2 * v[i] + (1 - kB2) * g * g;
      z[i] -= lr * g / (std::sqrt(v[i] / (1 - std::pow(kB2, k))) + kEps);
      if (decay) z[i] *= 1 - lr * kWd;
      x[i] = x[i] + c * (z[i] - x[i]);
      y[i] = (1 - kB1) * z[i] + kB1 * x[i];
    }
  }
  return {y, x, z};
}

TEST(ScheduleFree, ThreeStepsWithWarmupMatchTheFormulaForYXAndZ) {
  const std::vector<double> w0 = {1.0, -2.0, 0.5, 3.0}, b0 = {0.1, 0.2, -0.3};
  const std::vector<std::vector<double>> gw = {{0.3, -0.1, 0.05, 2.0}, {-1.0, 0.2, 0.5, -0.4}, {0.7, 0.7, -0.2, 0.1}};
  const std::vector<std::vector<double>> gb = {{1.0, -1.0, 0.01}, {-0.05, 0.5, 0.02}, {0.3, 0.0, -0.6}};
  std::vector<sdk::NamedParameter> params = {{"w.weight", leaf(w0, {2, 2})}, {"w.bias", leaf(b0, {3})}};
  ComponentHost h(toml());
  auto opt = h.components.optimizer(params);
  for (size_t k = 0; k < gw.size(); ++k) {
    params[0].tensor.mutable_grad() = at::tensor(gw[k], at::kDouble).view({2, 2});
    params[1].tensor.mutable_grad() = at::tensor(gb[k], at::kDouble);
    opt->step();
  }
  const sdk::StateDict state = opt->state_dict();
  const Expected ew = by_hand(w0, gw, true), eb = by_hand(b0, gb, false);
  expect_near(values(params[0].tensor), ew.y, 1e-12);
  expect_near(values(state.at("w.weight.x")), ew.x, 1e-12);
  expect_near(values(state.at("w.weight.z")), ew.z, 1e-12);
  expect_near(values(params[1].tensor), eb.y, 1e-12);
  expect_near(values(state.at("w.bias.x")), eb.x, 1e-12);
  EXPECT_NEAR(state.at("w.bias.weight_sum").item<double>(), kLr * (0.5 + 1 + 1), 1e-15) << "warmup 1/2, 1, 1";
}

TEST(ScheduleFree, EvalWeightsDifferAndSwappingBackRestoresTrainWeightsBitExactly) {
  ComponentHost h(toml());
  auto params = AdamWFixture::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  AdamWFixture::run(*opt, params, 0, 4);
  const auto train = AdamWFixture::copy(params);
  opt->use_eval_weights();
  opt->use_eval_weights();  // idempotent
  const sdk::StateDict state = opt->state_dict();
  const std::string moved = "output.weight";
  const size_t i = 7;
  ASSERT_EQ(params[i].name, moved);
  EXPECT_TRUE(at::equal(params[i].tensor, state.at(moved + ".x"))) << "eval weights are x";
  EXPECT_FALSE(at::equal(params[i].tensor, train[i].tensor)) << "x differs from y after a few steps";
  EXPECT_THROW(opt->step(), sdk::Error) << "stepping at the eval weights is refused";
  opt->use_train_weights();
  opt->use_train_weights();
  for (size_t k = 0; k < params.size(); ++k) EXPECT_TRUE(at::equal(params[k].tensor, train[k].tensor)) << params[k].name;
}

TEST(ScheduleFree, AfterLoadParamsHoldEvalWeightsUntilUseTrainWeights) {
  ComponentHost h(toml());
  auto params = AdamWFixture::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  AdamWFixture::run(*opt, params, 0, 3);
  const auto train = AdamWFixture::copy(params);
  opt->use_eval_weights();
  const sdk::StateDict saved = cloned(opt->state_dict());
  auto restored = AdamWFixture::params(at::kFloat);  // different weights: load must set them to x
  auto fresh = h.components.optimizer(restored);
  fresh->load_state_dict(saved);
  EXPECT_TRUE(at::equal(restored[7].tensor, saved.at("output.weight.x")));
  fresh->use_train_weights();
  for (size_t k = 0; k + 1 < params.size(); ++k) EXPECT_TRUE(at::equal(restored[k].tensor, train[k].tensor)) << params[k].name;
}

}  // namespace
}  // namespace kforge::test
