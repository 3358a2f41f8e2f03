// Scheduler factors built through the registry, against hand-derived values (KempnerForge formulas).
#include <gtest/gtest.h>

#include <cmath>

#include "support/component_host.h"

namespace kforge::test {
namespace {

constexpr double kTol = 1e-12;
const double kHalfSqrt2 = std::sqrt(2.0) / 2.0;

// The host stays alive as long as the scheduler: its code lives in the loaded plugin.
struct Schedule {
  Schedule(int64_t max_steps, const std::string& scheduler_toml)
      : host("[train]\nmax_steps = " + std::to_string(max_steps) + "\n[scheduler]\n" + scheduler_toml),
        scheduler(host.components.scheduler()) {}
  double operator()(int64_t step) const { return scheduler->factor(step); }
  ComponentHost host;
  std::unique_ptr<sdk::Scheduler> scheduler;
};

// warmup 10, max_steps 110, min_lr_ratio 0.1: decay over 100 steps from step 10.
TEST(Schedulers, CosineWarmupThenCosineDecayToMinRatio) {
  Schedule f(110, "name = \"cosine\"\nwarmup_steps = 10\nmin_lr_ratio = 0.1\n");
  EXPECT_EQ(f(0), 0.0);
  EXPECT_NEAR(f(5), 0.5, kTol);
  EXPECT_NEAR(f(10), 1.0, kTol);
  EXPECT_NEAR(f(35), 0.1 + 0.45 * (1 + kHalfSqrt2), kTol);  // a quarter into the decay
  EXPECT_NEAR(f(60), 0.55, kTol);                           // half way: cos = 0
  EXPECT_NEAR(f(110), 0.1, kTol);
  EXPECT_NEAR(f(500), 0.1, kTol);  // clamped after the end
}

TEST(Schedulers, LinearWarmupThenLinearDecayToMinRatio) {
  Schedule f(110, "name = \"linear\"\nwarmup_steps = 10\nmin_lr_ratio = 0.1\n");
  EXPECT_EQ(f(0), 0.0);
  EXPECT_NEAR(f(5), 0.5, kTol);
  EXPECT_NEAR(f(10), 1.0, kTol);
  EXPECT_NEAR(f(35), 0.775, kTol);
  EXPECT_NEAR(f(60), 0.55, kTol);
  EXPECT_NEAR(f(85), 0.325, kTol);
  EXPECT_NEAR(f(110), 0.1, kTol);
  EXPECT_NEAR(f(111), 0.1, kTol);
}

// warmup 10, stable 40, max_steps 110: decay over 60 steps from step 50.
std::string wsd(const std::string& type) {
  return "name = \"wsd\"\nwarmup_steps = 10\nstable_steps = 40\nmin_lr_ratio = 0.1\nwsd_decay_type = \"" + type + "\"\n";
}

TEST(Schedulers, WsdWarmupStableThenEachDecayShape) {
  Schedule cosine(110, wsd("cosine")), linear(110, wsd("linear")), sqrt_(110, wsd("sqrt"));
  for (const Schedule* f : {&cosine, &linear, &sqrt_}) {
    EXPECT_EQ((*f)(0), 0.0);
    EXPECT_NEAR((*f)(5), 0.5, kTol);
    EXPECT_NEAR((*f)(10), 1.0, kTol);
    EXPECT_NEAR((*f)(30), 1.0, kTol);   // stable
    EXPECT_NEAR((*f)(49), 1.0, kTol);   // last stable step
    EXPECT_NEAR((*f)(50), 1.0, kTol);   // decay progress 0: all shapes start at 1
    EXPECT_NEAR((*f)(110), 0.1, kTol);  // and all end at min_lr_ratio
    EXPECT_NEAR((*f)(200), 0.1, kTol);
  }
  EXPECT_NEAR(cosine(65), 0.1 + 0.45 * (1 + kHalfSqrt2), kTol);
  EXPECT_NEAR(linear(65), 0.775, kTol);
  EXPECT_NEAR(sqrt_(65), 0.1 + 0.9 * std::sqrt(0.75), kTol);
  EXPECT_NEAR(cosine(80), 0.55, kTol);
  EXPECT_NEAR(linear(80), 0.55, kTol);
  EXPECT_NEAR(sqrt_(80), 0.1 + 0.9 * kHalfSqrt2, kTol);
}

TEST(Schedulers, WsdSqrtStaysAboveLinearThroughoutTheDecay) {
  Schedule linear(110, wsd("linear")), sqrt_(110, wsd("sqrt"));
  for (int64_t step = 51; step < 110; ++step) EXPECT_GT(sqrt_(step), linear(step)) << step;
}

TEST(Schedulers, WsdStableStepsUnsetMeansNoStablePhase) {
  Schedule f(110, "name = \"wsd\"\nwarmup_steps = 10\nmin_lr_ratio = 0.1\n");
  EXPECT_NEAR(f(10), 1.0, kTol);
  EXPECT_NEAR(f(35), 0.1 + 0.45 * (1 + kHalfSqrt2), kTol);  // cosine by default, over 100 steps
  EXPECT_NEAR(f(60), 0.55, kTol);
  EXPECT_NEAR(f(110), 0.1, kTol);
}

TEST(Schedulers, DecayStepsSetOverridesTheRunLength) {
  Schedule cosine(1000, "name = \"cosine\"\nwarmup_steps = 10\nmin_lr_ratio = 0.1\ndecay_steps = 50\n");
  EXPECT_NEAR(cosine(35), 0.55, kTol);
  EXPECT_NEAR(cosine(60), 0.1, kTol);
  EXPECT_NEAR(cosine(999), 0.1, kTol);
  Schedule w(1000, "name = \"wsd\"\nwarmup_steps = 10\nstable_steps = 40\nmin_lr_ratio = 0.1\ndecay_steps = 20\n");
  EXPECT_NEAR(w(49), 1.0, kTol);
  EXPECT_NEAR(w(60), 0.55, kTol);
  EXPECT_NEAR(w(70), 0.1, kTol);
}

TEST(Schedulers, DecayStepsZeroActsAsUnsetLikeKempnerForge) {
  Schedule f(110, "name = \"cosine\"\nwarmup_steps = 10\nmin_lr_ratio = 0.1\ndecay_steps = 0\n");
  EXPECT_NEAR(f(60), 0.55, kTol);
  EXPECT_NEAR(f(110), 0.1, kTol);
}

TEST(Schedulers, ConstantWarmupThenOne) {
  Schedule f(110, "name = \"constant\"\nwarmup_steps = 10\nmin_lr_ratio = 0.1\n");
  EXPECT_EQ(f(0), 0.0);
  EXPECT_NEAR(f(5), 0.5, kTol);
  EXPECT_EQ(f(10), 1.0);
  EXPECT_EQ(f(110), 1.0);
  EXPECT_EQ(f(100000), 1.0);
}

std::string rex(double alpha, double min_ratio, int64_t warmup = 0) {
  return "name = \"rex\"\nwarmup_steps = " + std::to_string(warmup) + "\nmin_lr_ratio = " + std::to_string(min_ratio) +
         "\nrex_alpha = " + std::to_string(alpha) + "\n";
}

TEST(Schedulers, RexAlphaOneIsLinear) {
  Schedule f(100, rex(1.0, 0.0));
  EXPECT_NEAR(f(0), 1.0, kTol);
  EXPECT_NEAR(f(25), 0.75, kTol);
  EXPECT_NEAR(f(50), 0.5, kTol);
  EXPECT_NEAR(f(100), 0.0, kTol);
}

TEST(Schedulers, RexAlphaTwoIsConvexBelowLinear) {
  Schedule f(100, rex(2.0, 0.0));
  EXPECT_NEAR(f(25), 0.5625, kTol);
  EXPECT_NEAR(f(50), 0.25, kTol);
  for (int64_t step = 1; step < 100; ++step) EXPECT_LT(f(step), 1.0 - step / 100.0) << step;
}

TEST(Schedulers, RexAlphaHalfStaysHigh) {
  Schedule f(100, rex(0.5, 0.0));
  EXPECT_NEAR(f(50), kHalfSqrt2, kTol);
  EXPECT_NEAR(f(75), 0.5, kTol);
  for (int64_t step = 1; step < 100; ++step) EXPECT_GT(f(step), 1.0 - step / 100.0) << step;
}

TEST(Schedulers, RexFloorsAtMinRatioRatherThanOffsetting) {
  Schedule f(100, rex(2.0, 0.3));
  EXPECT_NEAR(f(20), 0.64, kTol);  // (1 - 0.2)^2, no offset added
  EXPECT_NEAR(f(50), 0.3, kTol);   // 0.25 floored
  EXPECT_NEAR(f(100), 0.3, kTol);
}

TEST(Schedulers, RexWarmsUpFirst) {
  Schedule f(110, rex(1.0, 0.0, 10));
  EXPECT_EQ(f(0), 0.0);
  EXPECT_NEAR(f(5), 0.5, kTol);
  EXPECT_NEAR(f(60), 0.5, kTol);
}

TEST(Schedulers, NoneIsOneAtEveryStepIgnoringWarmup) {
  Schedule f(110, "name = \"none\"\nwarmup_steps = 100\n");
  EXPECT_EQ(f(0), 1.0);
  EXPECT_EQ(f(50), 1.0);
  EXPECT_EQ(f(1000000), 1.0);
}

TEST(Schedulers, EveryWarmupScheduleStartsAtZeroAndRampsLinearly) {
  for (const char* name : {"cosine", "linear", "wsd", "constant", "rex"}) {
    Schedule f(1000, std::string("name = \"") + name + "\"\nwarmup_steps = 100\n");
    EXPECT_EQ(f(0), 0.0) << name;
    EXPECT_NEAR(f(1), 0.01, kTol) << name;
    EXPECT_NEAR(f(50), 0.5, kTol) << name;
    EXPECT_NEAR(f(100), 1.0, kTol) << name;
  }
}

TEST(Schedulers, ZeroLengthDecayIsGuarded) {
  // max_steps == warmup_steps leaves no decay steps: cosine/linear/wsd hold 1, rex drops to its floor.
  for (const char* name : {"cosine", "linear", "wsd"}) {
    Schedule f(100, std::string("name = \"") + name + "\"\nwarmup_steps = 100\nmin_lr_ratio = 0.1\n");
    EXPECT_EQ(f(100), 1.0) << name;
    EXPECT_EQ(f(150), 1.0) << name;
  }
  Schedule r(100, rex(1.0, 0.1, 100));
  EXPECT_EQ(r(100), 1.0);
  EXPECT_NEAR(r(101), 0.1, kTol);
  Schedule shorter(50, "name = \"cosine\"\nwarmup_steps = 100\n");  // negative length
  EXPECT_EQ(shorter(120), 1.0);
}

}  // namespace
}  // namespace kforge::test
