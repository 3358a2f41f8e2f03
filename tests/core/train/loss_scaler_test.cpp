// LossScaler: GradScaler's state machine (backoff and restart on an overflow, growth after growth_interval clean steps,
// no growth past float32), unscaling with its overflow check, the checkpoint round trip, and two ranks agreeing on
// one rank's overflow.
#include <gtest/gtest.h>

#include <limits>

#include "kforge/sdk/error.h"
#include "parallel/data_parallel.h"
#include "support/two_ranks.h"
#include "train/loss_scaler.h"

namespace kforge::test {
namespace {

using train::LossScaler;

/// One parameter holding `grad` as its gradient.
std::vector<sdk::NamedParameter> with_grad(const at::Tensor& grad) {
  at::Tensor p = at::zeros_like(grad).requires_grad_();
  p.mutable_grad() = grad.clone();
  return {{"p", p}};
}

TEST(LossScaler, StartsAtInitAnOverflowHalvesAndRestartsTheCount) {
  LossScaler scaler({65536.0, 2.0, 0.5, 3});
  EXPECT_EQ(scaler.scale(), 65536.0f);
  scaler.update(false);
  scaler.update(false);
  EXPECT_EQ(scaler.growth_tracker(), 2);
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_EQ(scaler.growth_tracker(), 0) << "an overflow restarts the clean-step count";
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 16384.0f);
}

TEST(LossScaler, GrowsAfterGrowthIntervalCleanStepsInARow) {
  LossScaler scaler({1024.0, 2.0, 0.5, 3});
  scaler.update(false);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 1024.0f) << "two clean steps of three";
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 2048.0f);
  EXPECT_EQ(scaler.growth_tracker(), 0);
  for (int i = 0; i < 3; ++i) scaler.update(false);
  EXPECT_EQ(scaler.scale(), 4096.0f);
}

TEST(LossScaler, OtherFactorsAndNoGrowthPastFloat32) {
  LossScaler scaler({1000.0, 3.0, 0.25, 1});
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 250.0f);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 750.0f);
  const float largest = std::numeric_limits<float>::max();
  LossScaler top({static_cast<double>(largest), 2.0, 0.5, 1});
  top.update(false);
  EXPECT_EQ(top.scale(), largest) << "GradScaler keeps the scale when the grown one is not finite";
  EXPECT_EQ(top.growth_tracker(), 0);
}

TEST(LossScaler, UnscaleDividesByTheScaleAndReportsNonFiniteGradients) {
  const LossScaler scaler({1024.0, 2.0, 0.5, 2000});
  const auto params = with_grad(at::tensor({2048.0f, -512.0f, 1.0f}));
  EXPECT_FALSE(scaler.unscale(params));
  EXPECT_TRUE(at::equal(params[0].tensor.grad(), at::tensor({2.0f, -0.5f, 1.0f / 1024})));
  for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_TRUE(scaler.unscale(with_grad(at::tensor({1.0f, bad})))) << bad;
  }
  at::Tensor no_grad = at::zeros({2}).requires_grad_();
  EXPECT_FALSE(scaler.unscale({{"none", no_grad}})) << "a parameter without a gradient has nothing to check";
  // Finite before, but past float32 once divided by a scale below 1: checked after the division.
  const LossScaler small({0.5, 2.0, 0.5, 2000});
  EXPECT_TRUE(small.unscale(with_grad(at::tensor({std::numeric_limits<float>::max()}))));
}

TEST(LossScaler, StateRoundTripContinuesTheSameScaleAndCount) {
  LossScaler a({65536.0, 2.0, 0.5, 4});
  for (const bool inf : {true, false, false, true, false, false, false}) a.update(inf);
  LossScaler b({65536.0, 2.0, 0.5, 4});
  b.load_state(nlohmann::json::parse(a.state().dump()));  // through the text a checkpoint stores
  EXPECT_EQ(b.scale(), a.scale());
  EXPECT_EQ(b.growth_tracker(), 3);
  a.update(false);
  b.update(false);
  EXPECT_EQ(b.scale(), a.scale());
  EXPECT_EQ(b.scale(), 32768.0f);
}

TEST(LossScaler, LoadStateRefusesMalformedStateNamingTheField) {
  LossScaler scaler({65536.0, 2.0, 0.5, 4});
  for (const char* text : {R"({"growth_tracker": 1})", R"({"scale": 2.0})", R"({"scale": -1.0, "growth_tracker": 0})",
                           R"({"scale": 0.0, "growth_tracker": 0})"}) {
    try {
      scaler.load_state(nlohmann::json::parse(text));
      FAIL() << text;
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find("train_state.loss_scale"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(scaler.scale(), 65536.0f) << "a refused state changes nothing";
}

// The trainer's overflow check on two ranks: rank 1's gradient overflows, rank 0's does not; both see the overflow
// (so both skip the step) and their scales stay equal.
TEST(LossScaler, OneRanksOverflowIsEveryRanksOverflow) {
  std::vector<float> scales(2);
  std::vector<int> found(2);
  const std::vector<std::string> errors = on_two_ranks([&](const dist::Runtime& runtime) {
    const int rank = runtime.rank();
    LossScaler scaler({65536.0, 2.0, 0.5, 2000});
    const float local = rank == 1 ? std::numeric_limits<float>::infinity() : 1.0f;
    const bool overflow = parallel::any_in_group(runtime.world(), scaler.unscale(with_grad(at::tensor({local}))));
    scaler.update(overflow);
    found[static_cast<size_t>(rank)] = overflow;
    scales[static_cast<size_t>(rank)] = scaler.scale();
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(found, (std::vector<int>{1, 1})) << "rank 0's finite gradient skips too";
  EXPECT_EQ(scales, (std::vector<float>{32768.0f, 32768.0f}));
}

}  // namespace
}  // namespace kforge::test
