// cross_entropy (and its z-loss) against python3-torch's F.cross_entropy(ignore_index=-100).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kforge/sdk/loss.h"
#include "plugins/losses/loss_fixture.h"
#include "support/npy.h"
#include "support/oracle.h"

namespace kforge::test {
namespace {

struct OracleCase {
  at::ScalarType dtype;
  double z_loss_weight;
  double tolerance;  ///< on the loss and on every gradient element
};

class CrossEntropyOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(CrossEntropyOracle, ValueAndGradientMatchTorch) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the loss oracle";
  const OracleCase c = GetParam();
  const at::Tensor logits = seeded_logits(7, 3, 5, 11, c.dtype);
  const at::Tensor labels = seeded_labels(8, 3, 5, 11, 0.3);
  const int64_t valid = labels.ne(sdk::kIgnoreIndex).sum().item<int64_t>();
  ASSERT_GT(valid, 0);
  ASSERT_LT(valid, labels.numel()) << "the case must include ignored labels";

  const auto dir = temp_dir("ce_oracle");
  write_npy(dir / "logits.npy", logits);
  write_npy(dir / "labels.npy", labels);
  std::string out;
  ASSERT_EQ(run_oracle("loss_cross_entropy.py", {dir.string(), std::to_string(c.z_loss_weight)}, &out), 0) << out;

  LossUnderTest t("loss_fn = \"cross_entropy\"\nz_loss_weight = " + std::to_string(c.z_loss_weight) + "\n");
  const ValueAndGrad got = value_and_grad(*t.loss, logits, labels);
  EXPECT_EQ(got.value.dim(), 0);
  EXPECT_NEAR(got.value.item<double>(), read_npy(dir / "out_loss.npy")[0].item<double>(), c.tolerance);
  const at::Tensor torch_grad = read_npy(dir / "out_grad.npy");
  EXPECT_LE((got.grad.to(at::kDouble) - torch_grad.to(at::kDouble)).abs().max().item<double>(), c.tolerance);
}

INSTANTIATE_TEST_SUITE_P(Cases, CrossEntropyOracle,
                         ::testing::Values(OracleCase{at::kDouble, 0.0, 1e-12}, OracleCase{at::kDouble, 0.05, 1e-12},
                                           OracleCase{at::kFloat, 0.0, 1e-6}, OracleCase{at::kFloat, 1e-4, 1e-6}),
                         [](const ::testing::TestParamInfo<OracleCase>& info) {
                           return std::string(info.param.dtype == at::kDouble ? "Float64" : "Float32") +
                                  (info.param.z_loss_weight > 0 ? "WithZLoss" : "");
                         });

}  // namespace
}  // namespace kforge::test
