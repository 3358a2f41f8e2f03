// The sinusoidal time embedding: its periods pinned (log-spaced, both ends included), its features against the closed
// form evaluated in double precision, its zero start, and the config errors naming the [time_embedding] key.
#include "video/sinusoidal_time_embedding.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "kforge/sdk/error.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

TEST(SinusoidalTimeEmbedding, PeriodsAreLogSpacedFromTheShortestToTheLongest) {
  // 16 bands over [0.5, 256] s (the defaults): each period 512^(1/15) times the one before.
  const std::vector<double> p = video::band_periods(16, 0.5, 256.0);
  ASSERT_EQ(p.size(), 16u);
  EXPECT_DOUBLE_EQ(p[0], 0.5);
  EXPECT_DOUBLE_EQ(p[5], 4.0);
  EXPECT_DOUBLE_EQ(p[10], 32.0);
  EXPECT_DOUBLE_EQ(p[15], 256.0);
  EXPECT_EQ(video::band_periods(1, 2.0, 8.0), std::vector<double>{2.0});
  EXPECT_EQ(video::band_periods(3, 3.0, 3.0), (std::vector<double>{3.0, 3.0, 3.0}));
}

TEST(SinusoidalTimeEmbedding, FeaturesAreTheSinesThenCosinesOfEachTimeAtEachPeriod) {
  const std::vector<double> periods = video::band_periods(4, 0.5, 64.0);
  const video::SinusoidalTimeEmbedding embedding(periods, 8);
  const std::vector<double> times = {0.0, 0.25, 1.0, 3.7, 12.5, 59.9};
  const at::Tensor f = embedding.features(at::tensor(times, at::kDouble).to(at::kFloat).view({2, 3}));
  ASSERT_EQ(f.sizes(), at::IntArrayRef({2, 3, 8}));
  const auto got = f.to(at::kDouble).contiguous().view({6, 8});
  for (size_t i = 0; i < times.size(); ++i) {
    const double t = static_cast<float>(times[i]);  // the time as float32 holds it
    for (size_t k = 0; k < periods.size(); ++k) {
      const double angle = 2.0 * std::numbers::pi * t / periods[k];
      // float32 rounds the rate and the product (an ulp of the angle each) and the sine itself.
      const double tolerance = 4.0 * std::numeric_limits<float>::epsilon() * (std::abs(angle) + 1.0);
      const auto row = static_cast<int64_t>(i), band = static_cast<int64_t>(k);
      EXPECT_NEAR(got[row][band].item<double>(), std::sin(angle), tolerance) << "t " << t << " band " << k;
      EXPECT_NEAR(got[row][band + 4].item<double>(), std::cos(angle), tolerance) << "t " << t << " band " << k;
    }
  }
}

TEST(SinusoidalTimeEmbedding, StartsAtZeroAndItsProjectionLearns) {
  video::SinusoidalTimeEmbedding embedding(video::band_periods(16, 0.5, 256.0), 12);
  const auto params = embedding.named_parameters(/*recurse=*/true);
  ASSERT_EQ(params.size(), 1u);
  ASSERT_TRUE(params.contains("proj.weight"));
  EXPECT_EQ(params["proj.weight"].sizes(), at::IntArrayRef({12, 32}));
  const at::Tensor times = at::tensor({0.0F, 1.0F, 2.5F, 100.0F}).view({2, 2});
  const at::Tensor out = embedding.forward(times);
  ASSERT_EQ(out.sizes(), at::IntArrayRef({2, 2, 12}));
  EXPECT_TRUE(out.eq(0).all().item<bool>());
  out.sum().backward();
  // d(sum)/dW[j][c] = the sum over the frames of feature c: the features themselves.
  const at::Tensor expected = embedding.features(times).view({4, 32}).sum(0).unsqueeze(0).expand({12, 32});
  EXPECT_TRUE(at::allclose(params["proj.weight"].grad(), expected, 1e-6, 1e-6));
}

TEST(SinusoidalTimeEmbedding, RefusesBadSettingsNamingTheKey) {
  expect_has(config_error_of([] { video::band_periods(0, 0.5, 256.0); }), {"[time_embedding] num_bands = 0"});
  expect_has(config_error_of([] { video::band_periods(16, 0.0, 256.0); }), {"[time_embedding] min_period = 0"});
  expect_has(config_error_of([] { video::band_periods(16, 4.0, 2.0); }),
             {"[time_embedding] max_period = 2", "min_period (4)"});
  expect_has(config_error_of([] { video::band_periods(16, 0.5, std::numeric_limits<double>::infinity()); }),
             {"[time_embedding] max_period = inf"});
}

}  // namespace
}  // namespace kforge::test
