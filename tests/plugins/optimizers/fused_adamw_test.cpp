// Fused multi-tensor AdamW against the per-tensor path (itself checked against torch.optim.AdamW in
// tests/plugins/optimizers), through the registry with [optimizer] fused on and off; skipped parameters; the
// kernel at every vector width the CPU runs.
#include "../../plugins/optimizers/fused_adamw.h"  // compiled into this test (see CMakeLists.txt)

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "plugins/optimizers/adamw_fixture.h"
#include "support/component_host.h"
#include "support/every_width.h"

namespace kforge::test {
namespace {

using F = AdamWFixture;

struct AdamWRun {
  std::vector<sdk::NamedParameter> params;
  sdk::StateDict state;
};

AdamWRun run_adamw(at::ScalarType dtype, bool fused) {
  ComponentHost h(F::toml(1e-2, 0.1, false), {std::string("--optimizer.fused=") + (fused ? "true" : "false")});
  AdamWRun r{F::params(dtype), {}};
  auto opt = h.components.optimizer(r.params);
  F::run(*opt, r.params, 0, F::kSteps);
  r.state = opt->state_dict();
  return r;
}

// Max difference in units of the last place at the scale of the per-tensor result (its max |value|):
// elements near zero come from cancellation, where a relative ulp count means nothing.
double max_ulps(const at::Tensor& a, const at::Tensor& b) {
  const double eps = b.scalar_type() == at::kFloat ? 1.1920929e-7 : 2.220446049250313e-16;
  const at::Tensor want = b.detach().to(at::kDouble);
  const double scale = std::max(want.abs().max().item<double>(), 1e-30) * eps;
  return (a.detach().to(at::kDouble) - want).abs().max().item<double>() / scale;
}

class FusedAdamW : public ::testing::TestWithParam<at::ScalarType> {};

// ATen may evaluate m*b1 + (1-b1)*g as one fused multiply-add where the fused loop rounds twice:
// a few ulps over 6 steps; 8 is the stated bound.
TEST_P(FusedAdamW, MatchesPerTensorPathWithinAFewUlpsOverStepsAndSkippedGrads) {
  const AdamWRun fused = run_adamw(GetParam(), true), plain = run_adamw(GetParam(), false);
  for (size_t i = 0; i < fused.params.size(); ++i) {
    SCOPED_TRACE(fused.params[i].name);
    EXPECT_LE(max_ulps(fused.params[i].tensor, plain.params[i].tensor), 8.0);
  }
  ASSERT_EQ(fused.state.size(), plain.state.size());
  for (const auto& [key, value] : plain.state) {
    SCOPED_TRACE(key);
    if (value.dim() == 0) {
      EXPECT_EQ(fused.state.at(key).item<int64_t>(), value.item<int64_t>());
    } else {
      EXPECT_LE(max_ulps(fused.state.at(key), value), 8.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedAdamW, ::testing::Values(at::kFloat, at::kDouble),
                         [](const ::testing::TestParamInfo<at::ScalarType>& info) {
                           return std::string(info.param == at::kFloat ? "Float32" : "Float64");
                         });

// A trainable parameter with no .grad at a step (frozen for that step) keeps its value (no weight
// decay either), its moments and its step count, fused or not.
class AdamWSkips : public ::testing::TestWithParam<bool> {};

TEST_P(AdamWSkips, ParameterWithoutGradIsNotUpdatedDecayedOrCounted) {
  ComponentHost h(F::toml(0.1, 0.5, false), {std::string("--optimizer.fused=") + (GetParam() ? "true" : "false")});
  auto params = F::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  const std::string name = F::names()[F::kUnused];
  for (auto& p : params) {
    if (p.tensor.requires_grad() && p.name != name) p.tensor.mutable_grad() = at::ones_like(p.tensor);
  }
  opt->step();
  const auto state_after_one = opt->state_dict();
  const at::Tensor value = params[F::kUnused].tensor.detach().clone();
  const at::Tensor before = F::params(at::kFloat)[F::kUnused].tensor.detach();
  EXPECT_TRUE(at::equal(value, before)) << "no update and no weight decay without a gradient";
  EXPECT_EQ(state_after_one.at(name + ".step").item<int64_t>(), 0);
  EXPECT_EQ(state_after_one.at(name + ".exp_avg").abs().max().item<float>(), 0.0f);
  EXPECT_EQ(state_after_one.at(name + ".exp_avg_sq").abs().max().item<float>(), 0.0f);
  EXPECT_EQ(state_after_one.at(F::names()[0] + ".step").item<int64_t>(), 1) << "the others did step";
}

INSTANTIATE_TEST_SUITE_P(Fused, AdamWSkips, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Fused" : "PerTensor"; });

// Each element's operations and their rounding are the same at every width (the baseline calls fma where the vector
// code has the instruction): the widths give the same bits, over lengths that leave a remainder past the vectors and
// past the parallel chunks.
TEST(FusedAdamWKernel, EveryVectorWidthGivesTheSameBits) {
  using builtin::optimizers::FusedAdamWTensor;
  for (const at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    SCOPED_TRACE(c10::toString(dtype));
    at::manual_seed(7);
    const auto draw = [&](int64_t n) { return at::randn({n}, at::TensorOptions().dtype(dtype)); };
    std::vector<FusedAdamWTensor> inputs;
    for (const int64_t n : {int64_t{3}, int64_t{(1 << 15) * 2 + 37}}) {
      inputs.push_back({draw(n), draw(n), draw(n) * 0.1, draw(n).square() * 0.01, {1e-2, 0.1, 0.9, 0.95, 1e-8}, 3});
    }
    std::vector<at::Tensor> first;
    at_every_width(builtin::optimizers::fused_adamw_width, builtin::optimizers::set_fused_adamw_width, [&] {
      std::vector<FusedAdamWTensor> run;
      for (const FusedAdamWTensor& t : inputs) {
        run.push_back({t.param.clone(), t.grad, t.exp_avg.clone(), t.exp_avg_sq.clone(), t.hyper, t.step});
      }
      builtin::optimizers::fused_adamw_update(run);
      std::vector<at::Tensor> got;
      for (const FusedAdamWTensor& t : run) got.insert(got.end(), {t.param, t.exp_avg, t.exp_avg_sq});
      if (first.empty()) {
        first = got;
        EXPECT_FALSE(at::equal(first[3], inputs[1].param)) << "the update changed the parameter";
        return;
      }
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(at::equal(got[i], first[i])) << "tensor " << i;
    });
  }
}

}  // namespace
}  // namespace kforge::test
