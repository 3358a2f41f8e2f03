// KFORGE_CPU_CAPABILITY's values (ATEN_CPU_CAPABILITY's names) and the width a cap leaves each kernel family: never
// wider than the cap, never one the CPU cannot run.
#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

#include <string>

#include "vector_lanes.h"

namespace kforge::test {
namespace {

using builtin::lanes::Width;

TEST(WidthCap, TakesAtensCapabilityNamesAndRefusesOthersAsAConfigErrorNamingTheVariable) {
  using builtin::lanes::capability_named;
  EXPECT_EQ(capability_named(nullptr), Width::Avx512) << "unset: no cap";
  EXPECT_EQ(capability_named(""), Width::Avx512);
  EXPECT_EQ(capability_named("avx512"), Width::Avx512);
  EXPECT_EQ(capability_named("avx2"), Width::Avx2);
  EXPECT_EQ(capability_named("default"), Width::Sse);
  for (const char* wrong : {"AVX2", "avx", "sse"}) {
    try {
      capability_named(wrong);
      ADD_FAILURE() << wrong << " was taken";
    } catch (const sdk::ConfigError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("KFORGE_CPU_CAPABILITY='") + wrong + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("avx512, avx2 or default"), std::string::npos) << message;
    }
  }
}

TEST(WidthCap, TheWidestWithinACapIsNoWiderThanItAndRunsOnThisCpu) {
  using builtin::lanes::cpu_supports;
  using builtin::lanes::widest_within;
  for (const Width cap : {Width::Sse, Width::Avx2, Width::Avx512}) {
    SCOPED_TRACE(builtin::lanes::kLanesOf[static_cast<int>(cap)]);
    const Width width = widest_within(cap);
    EXPECT_LE(static_cast<int>(width), static_cast<int>(cap));
    EXPECT_TRUE(cpu_supports(width));
    if (cpu_supports(cap)) EXPECT_EQ(width, cap) << "the cap itself, where the CPU runs it";
  }
  EXPECT_EQ(widest_within(Width::Sse), Width::Sse);
}

}  // namespace
}  // namespace kforge::test
