// The clock of the FMA peak: the stated maximum, unless the cores are measured running faster.
#include "env/cpu_clock.h"

#include <gtest/gtest.h>

namespace kforge::env {
namespace {

TEST(CpuClock, SysfsMaximumIsPreferredOverCpuinfo) {
  const CpuClock c = choose_clock(3.6, 2.1, 0);
  EXPECT_DOUBLE_EQ(c.ghz, 3.6);
  EXPECT_EQ(c.source, "cpuinfo_max_freq");
  const CpuClock fallback = choose_clock(0, 2.1, 0);
  EXPECT_DOUBLE_EQ(fallback.ghz, 2.1);
  EXPECT_EQ(fallback.source, "/proc/cpuinfo cpu MHz");
}

TEST(CpuClock, AFasterMeasuredClockWinsAndTheLogSaysWhatWasStated) {
  const CpuClock c = choose_clock(0, 2.1, 3.7);  // a VM's cpuinfo shows the base clock
  EXPECT_DOUBLE_EQ(c.ghz, 3.7);
  EXPECT_EQ(c.source, "measured; /proc/cpuinfo cpu MHz says 2.10 GHz");
  EXPECT_DOUBLE_EQ(choose_clock(3.6, 2.1, 3.5).ghz, 3.6);  // measured below the stated maximum
}

#if defined(__x86_64__)
// One dependent add retires per cycle, so the chain's rate is a clock: any real x86 core runs
// between 0.4 and 7 GHz (bounds of the hardware, not of this machine).
TEST(CpuClock, MeasuredClockIsAPlausibleCoreClock) {
  const double ghz = measured_ghz();
  EXPECT_GT(ghz, 0.4);
  EXPECT_LT(ghz, 7.0);
}
#endif

}  // namespace
}  // namespace kforge::env
