// Lion against values derived by hand from its formula, two steps on a decayed 2x2 and an undecayed 3-vector.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "plugins/optimizers/optimizer_checks.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

double sign(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }

TEST(Lion, TwoStepsMatchSignOfInterpolatedMomentumWithDecoupledDecay) {
  const double lr = 0.1, wd = 0.5, b1 = 0.9, b2 = 0.99;
  const std::vector<double> w0 = {1.0, -2.0, 0.5, 3.0}, b0 = {0.1, 0.2, -0.3};
  const std::vector<std::vector<double>> gw = {{0.3, -0.1, 0.0, 2.0}, {-1.0, 0.2, 0.5, -0.4}};
  const std::vector<std::vector<double>> gb = {{1.0, -1.0, 0.0}, {-0.05, 0.5, 0.02}};
  std::vector<sdk::NamedParameter> params = {{"w.weight", leaf(w0, {2, 2})}, {"w.bias", leaf(b0, {3})}};
  ComponentHost h(optimizer_toml("lion", lr, wd, b1, b2));
  auto opt = h.components.optimizer(params);
  for (size_t k = 0; k < 2; ++k) {
    params[0].tensor.mutable_grad() = at::tensor(gw[k], at::kDouble).view({2, 2});
    params[1].tensor.mutable_grad() = at::tensor(gb[k], at::kDouble);
    opt->step();
  }
  // By hand, element by element: p *= 1 - lr wd (matrix only); p -= lr sign(b1 m + (1-b1) g); m = b2 m + (1-b2) g.
  auto expected = [&](std::vector<double> p, const std::vector<std::vector<double>>& g, bool decay) {
    std::vector<double> m(p.size(), 0.0);
    for (size_t k = 0; k < g.size(); ++k) {
      for (size_t i = 0; i < p.size(); ++i) {
        if (decay) p[i] *= 1 - lr * wd;
        p[i] -= lr * sign(b1 * m[i] + (1 - b1) * g[k][i]);
        m[i] = b2 * m[i] + (1 - b2) * g[k][i];
      }
    }
    return std::make_pair(p, m);
  };
  const auto [ew, mw] = expected(w0, gw, true);
  const auto [eb, mb] = expected(b0, gb, false);
  const sdk::StateDict state = opt->state_dict();
  expect_near(values(params[0].tensor), ew, 1e-12);
  expect_near(values(state.at("w.weight.exp_avg")), mw, 1e-12);
  expect_near(values(params[1].tensor), eb, 1e-12);
  expect_near(values(state.at("w.bias.exp_avg")), mb, 1e-12);
  EXPECT_EQ(state.size(), 4u) << "one exp_avg and one step per parameter";
}

}  // namespace
}  // namespace kforge::test
