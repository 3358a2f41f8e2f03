// Muon: Newton–Schulz near-orthogonality and determinism, hand-derived updates, AdamW routing and lr scaling.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../../plugins/optimizers/newton_schulz.h"  // compiled into this test (see CMakeLists.txt)
#include "plugins/optimizers/optimizer_checks.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix mul(const Matrix& a, const Matrix& b) {
  Matrix out(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j) out[i][j] += a[i][k] * b[k][j];
  return out;
}

Matrix transpose(const Matrix& a) {
  Matrix out(a[0].size(), std::vector<double>(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[0].size(); ++j) out[j][i] = a[i][j];
  return out;
}

// The quintic iteration in double, written independently of the plugin.
Matrix newton_schulz_by_hand(Matrix x, int steps) {
  double norm = 0;
  for (auto& row : x) for (double v : row) norm += v * v;
  norm = std::sqrt(norm) + 1e-7;
  for (auto& row : x) for (double& v : row) v /= norm;
  for (int s = 0; s < steps; ++s) {
    const Matrix a = mul(x, transpose(x)), a2 = mul(a, a);
    Matrix b = a;
    for (size_t i = 0; i < a.size(); ++i)
      for (size_t j = 0; j < a.size(); ++j) b[i][j] = -4.7750 * a[i][j] + 2.0315 * a2[i][j];
    const Matrix bx = mul(b, x);
    for (size_t i = 0; i < x.size(); ++i)
      for (size_t j = 0; j < x[0].size(); ++j) x[i][j] = 3.4445 * x[i][j] + bx[i][j];
  }
  return x;
}

at::Tensor seeded(uint64_t seed, at::IntArrayRef shape) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::normal(0.0, 1.0, shape, gen, at::TensorOptions().dtype(at::kFloat));
}

class NewtonSchulzShapes : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(NewtonSchulzShapes, SingularValuesWithinHalfToOneAndAHalfAndDeterministic) {
  const at::Tensor g = seeded(7, GetParam());
  const at::Tensor x = builtin::optimizers::newton_schulz(g, 5);
  const at::Tensor s = at::linalg_svdvals(x.to(at::kDouble));
  EXPECT_GE(s.min().item<double>(), 0.5) << s;
  EXPECT_LE(s.max().item<double>(), 1.5) << s;
  EXPECT_TRUE(at::equal(x, builtin::optimizers::newton_schulz(g, 5))) << "same input, same bits";
}

INSTANTIATE_TEST_SUITE_P(SquareAndRectangular, NewtonSchulzShapes,
                         ::testing::Values(std::vector<int64_t>{16, 16}, std::vector<int64_t>{8, 32},
                                           std::vector<int64_t>{32, 8}, std::vector<int64_t>{6, 2, 3}));

TEST(Muon, TwoStepsMatchHandDerivedMomentumNewtonSchulzScaleAndDecay) {
  const double lr = 0.02, wd = 0.1, mu = 0.95;
  // 2x2 (scale 1) and 3x2 (scale sqrt(3/2)), both in the decay group.
  const std::vector<std::vector<int64_t>> shapes = {{2, 2}, {3, 2}};
  const std::vector<std::vector<double>> p0 = {{1.0, -2.0, 0.5, 3.0}, {0.1, 0.2, -0.3, 0.4, 0.5, -0.6}};
  const std::vector<std::vector<std::vector<double>>> grads = {
      {{0.3, -0.1, 0.05, 2.0}, {-1.0, 0.2, 0.5, -0.4}},
      {{1.0, 0.0, -1.0, 0.5, 0.2, 0.1}, {0.3, -0.7, 0.2, 0.9, -0.1, 0.4}}};
  std::vector<sdk::NamedParameter> params = {{"a.weight", leaf(p0[0], shapes[0])}, {"b.weight", leaf(p0[1], shapes[1])}};
  ComponentHost h(optimizer_toml("muon", lr, wd, 0.9, 0.95, "muon_momentum = 0.95\nmuon_ns_steps = 5\n"));
  auto opt = h.components.optimizer(params);
  for (size_t k = 0; k < 2; ++k) {
    for (size_t i = 0; i < 2; ++i) params[i].tensor.mutable_grad() = at::tensor(grads[i][k], at::kDouble).view(shapes[i]);
    opt->step();
  }
  for (size_t i = 0; i < 2; ++i) {
    const size_t rows = shapes[i][0], cols = shapes[i][1];
    std::vector<double> p = p0[i], buf(p.size(), 0.0);
    for (size_t k = 0; k < 2; ++k) {
      Matrix b(rows, std::vector<double>(cols));
      for (size_t j = 0; j < p.size(); ++j) {
        buf[j] = mu * buf[j] + grads[i][k][j];
        b[j / cols][j % cols] = buf[j];
      }
      const Matrix u = newton_schulz_by_hand(b, 5);
      const double scale = std::sqrt(std::max(1.0, double(rows) / double(cols)));
      for (size_t j = 0; j < p.size(); ++j) p[j] = p[j] * (1 - lr * wd) - lr * scale * u[j / cols][j % cols];
    }
    SCOPED_TRACE(params[i].name);
    expect_near(values(params[i].tensor), p, 1e-6);  // Newton–Schulz runs in float32
    expect_near(values(opt->state_dict().at(params[i].name + ".momentum_buffer")), buf, 1e-12);
  }
}

TEST(Muon, RoutesVectorsHighAspectEmbeddingAndOutputHeadToAdamW) {
  auto p = [](const char* name, at::IntArrayRef shape) {
    return sdk::NamedParameter{name, at::zeros(shape).set_requires_grad(true)};
  };
  std::vector<sdk::NamedParameter> params = {
      p("tok_embeddings.weight", {8, 4}), p("output_head.weight", {4, 4}), p("layers.0.wq.weight", {4, 4}),
      p("layers.0.tall.weight", {44, 4}), p("layers.0.edge.weight", {40, 4}), p("layers.0.norm.weight", {4}),
      p("conv.weight", {4, 2, 2})};
  ComponentHost h(optimizer_toml("muon", 0.02, 0.1, 0.9, 0.95));
  auto opt = h.components.optimizer(params);
  const sdk::StateDict state = opt->state_dict();
  for (const char* name : {"tok_embeddings.weight", "output_head.weight", "layers.0.tall.weight", "layers.0.norm.weight"}) {
    EXPECT_EQ(state.count(std::string(name) + ".exp_avg"), 1u) << name << " should be on AdamW";
    EXPECT_EQ(state.count(std::string(name) + ".momentum_buffer"), 0u) << name;
  }
  for (const char* name : {"layers.0.wq.weight", "layers.0.edge.weight", "conv.weight"}) {
    EXPECT_EQ(state.count(std::string(name) + ".momentum_buffer"), 1u) << name << " should be on Muon";
    EXPECT_EQ(state.count(std::string(name) + ".exp_avg"), 0u) << name;
  }
}

TEST(Muon, AdamWPartUsesMuonAdamLrScaledByTheSameFactor) {
  const double adam_lr = 0.005, factor = 0.5, g = 0.3;
  std::vector<sdk::NamedParameter> params = {{"layers.0.norm.weight", leaf({1.0, 2.0}, {2})}};
  ComponentHost h(optimizer_toml("muon", 0.02, 0.1, 0.9, 0.95, "muon_adam_lr = 0.005\n"));
  auto opt = h.components.optimizer(params);
  opt->set_lr_factor(factor);
  EXPECT_DOUBLE_EQ(opt->lr(), 0.02 * factor);
  params[0].tensor.mutable_grad() = at::full({2}, g, at::kDouble);
  opt->step();
  // First torch AdamW step at lr = muon_adam_lr * factor: m = (1-b1) g, v = (1-b2) g^2, no decay on 1-D.
  const double m = 0.1 * g, v = 0.05 * g * g;
  const double step = adam_lr * factor / 0.1 * m / (std::sqrt(v) / std::sqrt(0.05) + 1e-8);
  expect_near(values(params[0].tensor), {1.0 - step, 2.0 - step}, 1e-15);
}

}  // namespace
}  // namespace kforge::test
