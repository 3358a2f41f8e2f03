// AdamW against python3-torch's torch.optim.AdamW: same groups, tensors, gradients and lr factors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iomanip>

#include "plugins/optimizers/adamw_fixture.h"
#include "support/component_host.h"
#include "support/max_abs_diff.h"
#include "support/npy.h"
#include "support/oracle.h"

namespace kforge::test {
namespace {

constexpr double kAdamWLr = 1e-2;
constexpr double kWeightDecay = 0.1;

struct OracleCase {
  at::ScalarType dtype;
  bool decay_embeddings;
  bool fused;        ///< [optimizer] fused: the one-pass kernel or the per-tensor update
  double tolerance;  ///< max |kforge - torch| over every parameter and state tensor
};

void write_spec(const std::filesystem::path& dir, bool decay_embeddings) {
  std::ofstream spec(dir / "spec.json");
  spec << std::setprecision(17) << "{\"lr\": " << kAdamWLr << ", \"weight_decay\": " << kWeightDecay
       << ", \"betas\": [0.9, 0.95], \"eps\": 1e-8, \"decay_embeddings\": " << (decay_embeddings ? "true" : "false")
       << ", \"steps\": " << AdamWFixture::kSteps << ", \"factors\": [";
  for (int64_t k = 0; k < AdamWFixture::kSteps; ++k) spec << (k ? ", " : "") << AdamWFixture::lr_factor(k);
  spec << "], \"frozen\": [\"" << AdamWFixture::names()[AdamWFixture::kFrozen] << "\"], \"names\": [";
  for (size_t i = 0; i < AdamWFixture::names().size(); ++i) spec << (i ? ", " : "") << '"' << AdamWFixture::names()[i] << '"';
  spec << "]}\n";
}

class AdamWOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(AdamWOracle, MatchesTorchAdamWOverStepsWithLrFactorChangesAndSkippedGrads) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the AdamW oracle";
  const OracleCase c = GetParam();
  const auto dir = temp_dir("adamw_oracle");
  auto params = AdamWFixture::params(c.dtype);
  for (size_t i = 0; i < params.size(); ++i) write_npy(dir / ("p" + std::to_string(i) + ".npy"), params[i].tensor.detach());
  for (int64_t k = 0; k < AdamWFixture::kSteps; ++k) {
    for (size_t i = 0; i < params.size(); ++i) {
      const at::Tensor g = AdamWFixture::grad(k, static_cast<int>(i), params[i].tensor);
      if (g.defined()) write_npy(dir / ("g" + std::to_string(k) + "_" + std::to_string(i) + ".npy"), g);
    }
  }
  write_spec(dir, c.decay_embeddings);

  ComponentHost h(AdamWFixture::toml(kAdamWLr, kWeightDecay, c.decay_embeddings),
                  {std::string("--optimizer.fused=") + (c.fused ? "true" : "false")});
  auto opt = h.components.optimizer(params);
  AdamWFixture::run(*opt, params, 0, AdamWFixture::kSteps);

  std::string out;
  ASSERT_EQ(run_oracle("optim_adamw.py", {dir.string()}, &out), 0) << out;
  const sdk::StateDict state = opt->state_dict();
  const at::Tensor torch_steps = read_npy(dir / "out_steps.npy");
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name;
    const std::string n = std::to_string(i);
    SCOPED_TRACE(name);
    EXPECT_LE(max_abs_diff(params[i].tensor, read_npy(dir / ("out_p" + n + ".npy"))), c.tolerance);
    if (static_cast<int>(i) == AdamWFixture::kFrozen) {
      EXPECT_EQ(state.count(name + ".exp_avg"), 0u) << "frozen parameters are not in the optimizer";
      continue;
    }
    EXPECT_LE(max_abs_diff(state.at(name + ".exp_avg"), read_npy(dir / ("out_m" + n + ".npy"))), c.tolerance);
    EXPECT_LE(max_abs_diff(state.at(name + ".exp_avg_sq"), read_npy(dir / ("out_v" + n + ".npy"))), c.tolerance);
    EXPECT_EQ(state.at(name + ".step").item<int64_t>(), torch_steps[i].item<int64_t>());
  }
}

// float64: agreement to rounding noise; float32: a few ulps of O(1) values.
INSTANTIATE_TEST_SUITE_P(Dtypes, AdamWOracle,
                         ::testing::Values(OracleCase{at::kDouble, false, true, 1e-12},
                                           OracleCase{at::kDouble, true, true, 1e-12},
                                           OracleCase{at::kFloat, false, true, 1e-6},
                                           OracleCase{at::kDouble, false, false, 1e-12},
                                           OracleCase{at::kFloat, false, false, 1e-6}),
                         [](const ::testing::TestParamInfo<OracleCase>& info) {
                           return std::string(info.param.dtype == at::kDouble ? "Float64" : "Float32") +
                                  (info.param.decay_embeddings ? "DecayEmbeddings" : "") +
                                  (info.param.fused ? "" : "PerTensor");
                         });

}  // namespace
}  // namespace kforge::test
