// SGD against python3-torch's torch.optim.SGD: momentum, Nesterov and coupled weight decay, same groups.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iomanip>

#include "plugins/optimizers/adamw_fixture.h"
#include "plugins/optimizers/optimizer_checks.h"
#include "support/component_host.h"
#include "support/max_abs_diff.h"
#include "support/npy.h"
#include "support/oracle.h"

namespace kforge::test {
namespace {

using F = AdamWFixture;
constexpr double kSgdLr = 1e-2;

struct SgdCase {
  const char* label;
  double momentum;
  bool nesterov;
  double weight_decay;
};

void write_spec(const std::filesystem::path& dir, const SgdCase& c) {
  std::ofstream spec(dir / "spec.json");
  spec << std::setprecision(17) << "{\"lr\": " << kSgdLr << ", \"weight_decay\": " << c.weight_decay
       << ", \"momentum\": " << c.momentum << ", \"nesterov\": " << (c.nesterov ? "true" : "false")
       << ", \"decay_embeddings\": false, \"steps\": " << F::kSteps << ", \"factors\": [";
  for (int64_t k = 0; k < F::kSteps; ++k) spec << (k ? ", " : "") << F::lr_factor(k);
  spec << "], \"frozen\": [\"" << F::names()[F::kFrozen] << "\"], \"names\": [";
  for (size_t i = 0; i < F::names().size(); ++i) spec << (i ? ", " : "") << '"' << F::names()[i] << '"';
  spec << "]}\n";
}

class SgdOracle : public ::testing::TestWithParam<SgdCase> {};

TEST_P(SgdOracle, MatchesTorchSgdOverStepsWithLrFactorChangesAndSkippedGrads) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the SGD oracle";
  const SgdCase c = GetParam();
  const auto dir = temp_dir("sgd_oracle");
  auto params = F::params(at::kDouble);
  for (size_t i = 0; i < params.size(); ++i) write_npy(dir / ("p" + std::to_string(i) + ".npy"), params[i].tensor.detach());
  for (int64_t k = 0; k < F::kSteps; ++k) {
    for (size_t i = 0; i < params.size(); ++i) {
      const at::Tensor g = F::grad(k, static_cast<int>(i), params[i].tensor);
      if (g.defined()) write_npy(dir / ("g" + std::to_string(k) + "_" + std::to_string(i) + ".npy"), g);
    }
  }
  write_spec(dir, c);

  std::ostringstream extra;
  extra << std::setprecision(17) << "sgd_momentum = " << c.momentum << "\nsgd_nesterov = " << (c.nesterov ? "true" : "false") << "\n";
  ComponentHost h(optimizer_toml("sgd", kSgdLr, c.weight_decay, 0.9, 0.95, extra.str()));
  auto opt = h.components.optimizer(params);
  F::run(*opt, params, 0, F::kSteps);

  std::string out;
  ASSERT_EQ(run_oracle("optim_sgd.py", {dir.string()}, &out), 0) << out;
  const sdk::StateDict state = opt->state_dict();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string n = std::to_string(i);
    SCOPED_TRACE(params[i].name);
    EXPECT_LE(max_abs_diff(params[i].tensor, read_npy(dir / ("out_p" + n + ".npy"))), 1e-12);
    if (static_cast<int>(i) == F::kFrozen || c.momentum == 0.0) continue;
    EXPECT_LE(max_abs_diff(state.at(params[i].name + ".momentum_buffer"), read_npy(dir / ("out_b" + n + ".npy"))),
              1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, SgdOracle,
                         ::testing::Values(SgdCase{"Momentum", 0.9, false, 0.0},
                                           SgdCase{"MomentumWeightDecay", 0.9, false, 0.1},
                                           SgdCase{"NesterovWeightDecay", 0.9, true, 0.1},
                                           SgdCase{"PlainWeightDecay", 0.0, false, 0.1}),
                         [](const ::testing::TestParamInfo<SgdCase>& info) { return std::string(info.param.label); });

TEST(SgdConfig, NesterovWithoutMomentumIsRejectedNamingTheKey) {
  ComponentHost h(optimizer_toml("sgd", kSgdLr, 0.0, 0.9, 0.95, "sgd_momentum = 0.0\nsgd_nesterov = true\n"));
  auto params = F::params(at::kFloat);
  try {
    h.components.optimizer(params);
    FAIL() << "expected an error";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("sgd_nesterov"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test
