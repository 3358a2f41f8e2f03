// cross_entropy: all labels ignored, the z-loss formula on hand-derived cases, shape errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kforge/sdk/error.h"
#include "kforge/sdk/loss.h"
#include "plugins/losses/loss_fixture.h"

namespace kforge::test {
namespace {

TEST(CrossEntropy, AllIgnoredIsExactlyZeroWithZeroGradientForBothLosses) {
  for (const char* config : {"loss_fn = \"cross_entropy\"\n", "loss_fn = \"chunked_cross_entropy\"\nce_chunk_size = 3\n"}) {
    LossUnderTest t(config);
    const at::Tensor logits = seeded_logits(1, 2, 5, 7, at::kFloat);
    const at::Tensor labels = at::full({2, 5}, sdk::kIgnoreIndex, at::kLong);
    at::Tensor leaf = logits.clone().set_requires_grad(true);
    const at::Tensor loss = t.loss->compute(leaf, labels);
    EXPECT_TRUE(loss.requires_grad()) << config << ": still part of the graph";
    EXPECT_EQ(loss.item<double>(), 0.0) << config;
    loss.backward();
    ASSERT_TRUE(leaf.grad().defined()) << config;
    EXPECT_TRUE(at::equal(leaf.grad(), at::zeros_like(logits))) << config;
  }
}

// Constant logits c over a vocabulary of 4: logsumexp = c + ln 4 at every position, CE = ln 4.
TEST(CrossEntropy, ZLossIsWeightTimesMeanSquaredLogSumExpOverAllPositions) {
  const double w = 0.01;
  const double lse = 2.0 + std::log(4.0);
  LossUnderTest t("loss_fn = \"cross_entropy\"\nz_loss_weight = 0.01\n");
  const at::Tensor logits = at::full({2, 3, 4}, 2.0, at::kDouble);
  // Ignored positions still count for the z-loss.
  const at::Tensor ignored = at::full({2, 3}, sdk::kIgnoreIndex, at::kLong);
  EXPECT_NEAR(t.loss->compute(logits, ignored).item<double>(), w * lse * lse, 1e-14);
  // With labels: CE (ln 4) plus the same z-loss. d/dlogit = (softmax - onehot)/N + w * 2 lse softmax / N.
  const at::Tensor labels = at::zeros({2, 3}, at::kLong);
  const ValueAndGrad got = value_and_grad(*t.loss, logits, labels);
  EXPECT_NEAR(got.value.item<double>(), std::log(4.0) + w * lse * lse, 1e-14);
  const double n = 6.0;
  EXPECT_NEAR(got.grad[0][0][0].item<double>(), (0.25 - 1.0) / n + w * 2 * lse * 0.25 / n, 1e-14);
  EXPECT_NEAR(got.grad[1][2][3].item<double>(), 0.25 / n + w * 2 * lse * 0.25 / n, 1e-14);
}

TEST(CrossEntropy, ZeroZLossWeightAddsNothing) {
  LossUnderTest plain("loss_fn = \"cross_entropy\"\n");
  LossUnderTest zero("loss_fn = \"cross_entropy\"\nz_loss_weight = 0.0\n");
  const at::Tensor logits = seeded_logits(3, 2, 4, 9, at::kDouble);
  const at::Tensor labels = seeded_labels(4, 2, 4, 9, 0.2);
  EXPECT_EQ(plain.loss->compute(logits, labels).item<double>(), zero.loss->compute(logits, labels).item<double>());
  LossUnderTest with_z("loss_fn = \"cross_entropy\"\nz_loss_weight = 0.001\n");
  EXPECT_GT(with_z.loss->compute(logits, labels).item<double>(), plain.loss->compute(logits, labels).item<double>());
}

TEST(CrossEntropy, MeanIsOverNonIgnoredTokensOnly) {
  // Uniform logits: every valid token costs ln V whatever else is ignored.
  LossUnderTest t("loss_fn = \"cross_entropy\"\n");
  const at::Tensor logits = at::zeros({1, 4, 5}, at::kDouble);
  const at::Tensor labels = at::tensor({int64_t{1}, sdk::kIgnoreIndex, int64_t{3}, sdk::kIgnoreIndex}).view({1, 4});
  EXPECT_NEAR(t.loss->compute(logits, labels).item<double>(), std::log(5.0), 1e-15);
}

TEST(CrossEntropy, MismatchedShapesAreAnError) {
  LossUnderTest t("loss_fn = \"cross_entropy\"\n");
  EXPECT_THROW(t.loss->compute(at::zeros({2, 3, 5}), at::zeros({2, 4}, at::kLong)), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
