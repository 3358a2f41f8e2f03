// The bf16 warning appears exactly when the CPU lacks native bf16, with the measured cost and the
// fix, or the probe's failure; the probe itself measures a positive ratio.
#include "env/bf16_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace kforge::env {
namespace {

TEST(Bf16Probe, WarnsWithTheMeasuredCostAndTheFixWhenBf16IsEmulated) {
  const auto warning = bf16_warning(/*native_bf16=*/false, [] { return 14.2; });
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("LibTorch's bf16 GEMMs run 14.2x slower than fp32 on this CPU"), std::string::npos)
      << *warning;
  EXPECT_NE(warning->find("no avx512_bf16"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("kept as configured"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--train.mixed_precision=fp32"), std::string::npos) << *warning;
}

TEST(Bf16Probe, AFailingProbeWarnsWithTheFailureInsteadOfStoppingTheRun) {
  const auto warning =
      bf16_warning(/*native_bf16=*/false, []() -> double { throw std::runtime_error("no bf16 primitive"); });
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("LibTorch's bf16 GEMM fails on this machine (no bf16 primitive)"), std::string::npos)
      << *warning;
  EXPECT_NE(warning->find("--train.mixed_precision=fp32"), std::string::npos) << *warning;
}

TEST(Bf16Probe, StaysSilentAndDoesNotProbeWithNativeBf16) {
  bool probed = false;
  EXPECT_FALSE(bf16_warning(/*native_bf16=*/true, [&] {
                 probed = true;
                 return 14.2;
               }).has_value());
  EXPECT_FALSE(probed);
}

TEST(Bf16Probe, ProbeReturnsAPositiveRatio) {
  const double ratio = bf16_gemm_slowdown();
  EXPECT_TRUE(std::isfinite(ratio));
  EXPECT_GT(ratio, 0.0);
}

}  // namespace
}  // namespace kforge::env
