// The fused cross-entropy kernel against ATen's cross_entropy_loss (value and gradient), plus a
// finite-difference check, extreme logits, ignored rows and bad labels.
#include "losses/fused_cross_entropy.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "kforge/sdk/error.h"
#include "kforge/sdk/loss.h"
#include "plugins/losses/loss_fixture.h"
#include "support/every_width.h"
#include "support/max_abs_diff.h"

namespace kforge::test {
namespace {

using builtin::losses::fused_cross_entropy_sum;

/// The summed loss and d sum / d logits.
ValueAndGrad fused(const at::Tensor& logits, const at::Tensor& labels) {
  at::Tensor leaf = logits.detach().clone().set_requires_grad(true);
  at::Tensor value = fused_cross_entropy_sum(leaf, labels);
  value.backward();
  return {value.detach(), leaf.grad()};
}

/// ATen's summed cross-entropy of the same logit values, in float64.
ValueAndGrad aten_float64(const at::Tensor& logits, const at::Tensor& labels) {
  at::Tensor leaf = logits.detach().to(at::kDouble).set_requires_grad(true);
  at::Tensor value = at::cross_entropy_loss(leaf, labels, {}, at::Reduction::Sum, sdk::kIgnoreIndex);
  value.backward();
  return {value.detach(), leaf.grad()};
}

/// [tokens, vocab] logits and labels with about 30% ignored.
std::pair<at::Tensor, at::Tensor> random_case(uint64_t seed, int64_t tokens, int64_t vocab, at::ScalarType dtype) {
  return {seeded_logits(seed, 1, tokens, vocab, dtype).reshape({tokens, vocab}),
          seeded_labels(seed + 1, 1, tokens, vocab, 0.3).reshape({tokens})};
}

/// Value within `value_rel` (relative) and every gradient entry (all in [-1, 1]) within `grad_abs`.
void expect_matches_aten(at::ScalarType dtype, int64_t vocab, double value_rel, double grad_abs) {
  const auto [logits, labels] = random_case(31, 64, vocab, dtype);
  ASSERT_GT(labels.eq(sdk::kIgnoreIndex).sum().item<int64_t>(), 0) << "the case must include ignored labels";
  const ValueAndGrad got = fused(logits, labels);
  const ValueAndGrad want = aten_float64(logits, labels);
  EXPECT_EQ(got.value.scalar_type(), at::promote_types(dtype, at::kFloat));
  EXPECT_EQ(got.grad.scalar_type(), dtype);
  const double value = want.value.item<double>();
  EXPECT_NEAR(got.value.item<double>(), value, value_rel * std::abs(value));
  EXPECT_LE(max_abs_diff(got.grad, want.grad), grad_abs);
  const at::Tensor ignored = labels.eq(sdk::kIgnoreIndex);
  EXPECT_TRUE(at::equal(got.grad.index({ignored}), at::zeros_like(got.grad.index({ignored}))));
}

// Device dispatch: the fused kernel is the CPU's; logits on another device (meta stands in for an accelerator here)
// take LibTorch's own ops through the loss plugin, chunked or not, with the gradient on that device.
TEST(FusedCrossEntropy, TakesCpuLogitsOnlyAndTheLossRunsOnAnotherDevice) {
  EXPECT_TRUE(builtin::losses::fused_cross_entropy_supports(at::randn({4, 10})));
  const at::TensorOptions meta = at::TensorOptions().device(c10::kMeta);
  EXPECT_FALSE(builtin::losses::fused_cross_entropy_supports(at::empty({4, 10}, meta)));
  for (const char* train :
       {"loss_fn = \"cross_entropy\"\n", "loss_fn = \"chunked_cross_entropy\"\nce_chunk_size = 2\n"}) {
    LossUnderTest under(train);
    const at::Tensor logits = at::empty({2, 3, 10}, meta).requires_grad_();
    const at::Tensor loss = under.loss->compute(logits, at::zeros({2, 3}, meta.dtype(at::kLong)));
    loss.backward();
    EXPECT_TRUE(loss.is_meta()) << train;
    EXPECT_TRUE(logits.grad().is_meta()) << train;
  }
}

TEST(FusedCrossEntropy, DefaultWidthIsTheWidestThisCpuRuns) {
  const builtin::lanes::Width original = builtin::losses::row_kernel_width();
  builtin::lanes::Width widest = builtin::lanes::Width::Sse;
  for (const auto width : {builtin::lanes::Width::Avx2, builtin::lanes::Width::Avx512}) {
    try {
      builtin::losses::set_row_kernel_width(width);
      widest = width;
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find("lane"), std::string::npos) << e.what();
    }
  }
  builtin::losses::set_row_kernel_width(original);
  EXPECT_EQ(original, widest);
}

// Float32 is compared with float64 ATen: float32 ATen itself drifts ~1e-5 at vocab 32000.
// 1003 columns: not a multiple of any vector width, so the tail path runs too.
TEST(FusedCrossEntropy, Float32MatchesAten) {
  at_every_width(builtin::losses::row_kernel_width, builtin::losses::set_row_kernel_width,
                 [] { expect_matches_aten(at::kFloat, 1003, 1e-6, 1e-6); });
}

TEST(FusedCrossEntropy, Float32LargeVocabMatchesAten) {
  at_every_width(builtin::losses::row_kernel_width, builtin::losses::set_row_kernel_width,
                 [] { expect_matches_aten(at::kFloat, 32000, 1e-6, 1e-6); });
}

TEST(FusedCrossEntropy, Float64MatchesAten) { expect_matches_aten(at::kDouble, 1003, 1e-12, 1e-12); }

// bfloat16: computed in float32, so the value is float32-accurate; the gradient is rounded to
// bfloat16 (8 significant bits), i.e. within 2^-9 of entries at most 1 in size.
TEST(FusedCrossEntropy, BFloat16MatchesAtenToBFloat16Rounding) {
  at_every_width(builtin::losses::row_kernel_width, builtin::losses::set_row_kernel_width,
                 [] { expect_matches_aten(at::kBFloat16, 1003, 1e-6, 1.0 / 512); });
}

TEST(FusedCrossEntropy, BFloat16GradientIsTheRoundedFloat32Gradient) {
  at_every_width(builtin::losses::row_kernel_width, builtin::losses::set_row_kernel_width, [] {
    const auto [logits, labels] = random_case(41, 16, 517, at::kBFloat16);
    const ValueAndGrad got = fused(logits, labels);
    const ValueAndGrad want = aten_float64(logits, labels);
    // Each entry is the float64 gradient up to float32 error, then one bfloat16 rounding (<= 2^-9 relative).
    const at::Tensor err = (got.grad.to(at::kDouble) - want.grad).abs();
    EXPECT_TRUE(at::all(err <= want.grad.abs() * (1.0 / 256) + 1e-7).item<bool>());
  });
}

// The bfloat16 kernel widens and rounds a vector at a time: its value and gradient must be exactly
// those of the float32 kernel on the widened logits, each gradient entry rounded as c10 rounds it.
TEST(FusedCrossEntropy, BFloat16IsTheFloat32KernelOnWidenedLogitsRoundedOnce) {
  at_every_width(builtin::losses::row_kernel_width, builtin::losses::set_row_kernel_width, [] {
    for (const int64_t vocab : {517, 4096, 3}) {  // with and without a partial last vector
      SCOPED_TRACE(vocab);
      const auto [logits, labels] = random_case(43, 24, vocab, at::kBFloat16);
      const ValueAndGrad got = fused(logits, labels);
      const ValueAndGrad widened = fused(logits.to(at::kFloat), labels);
      EXPECT_EQ(got.value.item<float>(), widened.value.item<float>());
      EXPECT_TRUE(at::equal(got.grad, widened.grad.to(at::kBFloat16)));
    }
  });
}

TEST(FusedCrossEntropy, ExtremeLogitsDoNotOverflow) {
  at_every_width(builtin::losses::row_kernel_width, builtin::losses::set_row_kernel_width, [] {
    for (at::ScalarType dtype : {at::kFloat, at::kDouble, at::kBFloat16}) {
      at::Tensor logits = at::zeros({3, 9}, at::kDouble);
      logits[0][2] = 1e4;  // label on the huge logit: loss 0
      logits[1][4] = 1e4;  // label elsewhere: loss 1e4
      logits[2].fill_(-1e4);
      logits[2][7] = 1e4;  // label on a -1e4 logit: loss 2e4
      logits = logits.to(dtype);
      const at::Tensor labels = at::tensor({int64_t{2}, int64_t{0}, int64_t{1}});
      const ValueAndGrad got = fused(logits, labels);
      const ValueAndGrad want = aten_float64(logits, labels);
      ASSERT_TRUE(std::isfinite(got.value.item<double>())) << dtype;
      EXPECT_NEAR(got.value.item<double>(), want.value.item<double>(), 1e-6 * want.value.item<double>()) << dtype;
      EXPECT_TRUE(at::all(at::isfinite(got.grad)).item<bool>()) << dtype;
      EXPECT_LE(max_abs_diff(got.grad, want.grad), 1e-7) << dtype;
    }
  });
}

TEST(FusedCrossEntropy, GradientMatchesFiniteDifferences) {
  const auto [logits, labels] = random_case(51, 4, 5, at::kDouble);
  at::Tensor fixed_labels = labels.clone();
  fixed_labels[0] = sdk::kIgnoreIndex;
  fixed_labels[1] = 3;
  const ValueAndGrad got = fused(logits, fixed_labels);
  const double h = 1e-6;
  for (int64_t i = 0; i < logits.size(0); ++i) {
    for (int64_t j = 0; j < logits.size(1); ++j) {
      at::Tensor up = logits.clone();
      at::Tensor down = logits.clone();
      up[i][j] += h;
      down[i][j] -= h;
      const double numeric = (fused_cross_entropy_sum(up, fixed_labels).item<double>() -
                              fused_cross_entropy_sum(down, fixed_labels).item<double>()) / (2 * h);
      EXPECT_NEAR(got.grad[i][j].item<double>(), numeric, 1e-8) << "token " << i << " class " << j;
    }
  }
}

TEST(FusedCrossEntropy, AllIgnoredIsExactlyZeroWithZeroGradient) {
  const at::Tensor logits = seeded_logits(61, 1, 6, 10, at::kFloat).reshape({6, 10});
  const at::Tensor labels = at::full({6}, sdk::kIgnoreIndex, at::kLong);
  const ValueAndGrad got = fused(logits, labels);
  EXPECT_EQ(got.value.item<double>(), 0.0);
  EXPECT_TRUE(at::equal(got.grad, at::zeros_like(logits)));
}

TEST(FusedCrossEntropy, LabelOutsideTheVocabThrows) {
  const at::Tensor logits = at::zeros({2, 4});
  EXPECT_THROW(fused_cross_entropy_sum(logits, at::tensor({int64_t{1}, int64_t{4}})), sdk::Error);
  EXPECT_THROW(fused_cross_entropy_sum(logits, at::tensor({int64_t{-1}, int64_t{0}})), sdk::Error);
}

TEST(FusedCrossEntropy, UnsupportedLogitsThrow) {
  EXPECT_THROW(fused_cross_entropy_sum(at::zeros({4, 2}).t(), at::zeros({2}, at::kLong)), sdk::Error);
  EXPECT_THROW(fused_cross_entropy_sum(at::zeros({2, 4}, at::kHalf), at::zeros({2}, at::kLong)), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
