// moe_bias_schedule factors at the start, middle and end of training (KempnerForge §2 Routers).
#include <gtest/gtest.h>

#include <kforge/sdk/error.h>

#include "bias_schedule.h"

namespace kforge::test::routers {
namespace {

using kforge::builtin::routers::bias_rate_factor;
using kforge::builtin::routers::BiasSchedule;

TEST(BiasSchedule, ConstantIsOneThroughout) {
  for (int64_t step : {0, 50, 100}) EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::Constant, step, 100), 1.0);
}

TEST(BiasSchedule, CosineDecayGoesFromOneThroughHalfToZero) {
  EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::CosineDecay, 0, 100), 1.0);
  EXPECT_NEAR(bias_rate_factor(BiasSchedule::CosineDecay, 50, 100), 0.5, 1e-15);
  EXPECT_NEAR(bias_rate_factor(BiasSchedule::CosineDecay, 100, 100), 0.0, 1e-15);
  EXPECT_NEAR(bias_rate_factor(BiasSchedule::CosineDecay, 25, 100), 0.5 * (1 + std::sqrt(0.5)), 1e-15);
}

TEST(BiasSchedule, LinearWarmupReachesOneAtATenthOfTraining) {
  EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::LinearWarmup, 0, 100), 0.0);
  EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::LinearWarmup, 5, 100), 0.5);
  EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::LinearWarmup, 10, 100), 1.0);
  EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::LinearWarmup, 50, 100), 1.0);
  EXPECT_DOUBLE_EQ(bias_rate_factor(BiasSchedule::LinearWarmup, 100, 100), 1.0);
}

TEST(BiasSchedule, UnknownNameIsAConfigErrorNamingTheKey) {
  EXPECT_EQ(kforge::builtin::routers::parse_bias_schedule("cosine_decay"), BiasSchedule::CosineDecay);
  try {
    kforge::builtin::routers::parse_bias_schedule("cosine");
    FAIL() << "no error";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_bias_schedule"), std::string::npos);
  }
}

}  // namespace
}  // namespace kforge::test::routers
