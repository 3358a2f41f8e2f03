// The FMA peak: FLOP per cycle by CPU generation, the derivation the log shows, and the invariant
// that no GEMM on this machine beats the peak derived for it (else MFU could exceed 100%).
#include "env/peak_flops.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "env/cpu_clock.h"
#include "env/gemm_rate.h"

namespace kforge::env {
namespace {

CpuInfo cpu(const std::string& vendor, int family, int model, bool avx512f, bool avx512_bf16 = false) {
  CpuInfo c;
  c.vendor = vendor, c.family = family, c.model = model;
  c.avx2 = c.fma = true;
  c.avx512f = avx512f, c.avx512_bf16 = avx512_bf16;
  c.physical_cores = 2;
  return c;
}

TEST(FmaPeak, FlopsPerCycleFollowTheFmaUnitsOfEachGeneration) {
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x19, 0x21, false)).flops, 32);  // Zen 3: 2x256-bit
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x19, 0x11, true)).flops, 32);   // Zen 4: 512 as 2x256
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x1A, 0x02, true)).flops, 64);   // Zen 5 server: 2x512
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x1A, 0x44, true)).flops, 64);   // Zen 5 desktop
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x1A, 0x24, true)).flops, 32);   // Zen 5 mobile: 2x256
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x17, 0x31, false)).flops, 32);  // Zen 2
  EXPECT_EQ(fp32_flops_per_cycle(cpu("AuthenticAMD", 0x17, 0x01, false)).flops, 16);  // Zen 1: 2x128-bit
  EXPECT_EQ(fp32_flops_per_cycle(cpu("GenuineIntel", 6, 0x55, true)).flops, 64);      // Skylake-SP, 2 ports
  EXPECT_EQ(fp32_flops_per_cycle(cpu("GenuineIntel", 6, 0x3F, false)).flops, 32);     // Haswell
}

TEST(FmaPeak, UnknownPartsGetTheHigherPlausibleValueAndSaySo) {
  const FlopsPerCycle future = fp32_flops_per_cycle(cpu("AuthenticAMD", 0x1B, 0x00, true));
  EXPECT_EQ(future.flops, 64);
  EXPECT_NE(future.why.find("assumed"), std::string::npos) << future.why;
  const FlopsPerCycle intel = fp32_flops_per_cycle(cpu("GenuineIntel", 6, 0x8F, true));
  EXPECT_EQ(intel.flops, 64);  // Xeon Silver/Bronze have one 512-bit FMA port: 32
  EXPECT_NE(intel.why.find("assumed"), std::string::npos) << intel.why;
}

TEST(FmaPeak, Bf16RunsDoubleThePeakOnlyWithNativeBf16) {
  EXPECT_EQ(flops_per_cycle(cpu("AuthenticAMD", 0x19, 0x11, true, /*avx512_bf16=*/true), true).flops, 64);
  EXPECT_EQ(flops_per_cycle(cpu("AuthenticAMD", 0x19, 0x11, true, /*avx512_bf16=*/true), false).flops, 32);
  EXPECT_EQ(flops_per_cycle(cpu("AuthenticAMD", 0x19, 0x21, false), true).flops, 32);  // emulated in fp32
  CpuInfo amx = cpu("GenuineIntel", 6, 0x8F, true, true);
  amx.amx_bf16 = true;
  EXPECT_EQ(flops_per_cycle(amx, true).flops, 1024);
}

TEST(FmaPeak, DerivationNamesCoresFlopsPerCycleAndClock) {
  const PeakFlops peak =
      peak_flops(cpu("AuthenticAMD", 0x19, 0x11, true), CpuClock{3.6, "cpuinfo_max_freq"}, 2, /*bf16=*/false);
  EXPECT_DOUBLE_EQ(peak.gflops, 2 * 32 * 3.6);
  EXPECT_EQ(peak.derivation,
            "230.4 GFLOP/s = 2 cores x 32 FLOP/cycle (AVX-512 on 2x256-bit FMA, Zen 4) x 3.60 GHz (cpuinfo_max_freq)");
}

TEST(FmaPeak, CoresAreThreadsCappedByPhysicalCores) {
  const CpuInfo zen3 = cpu("AuthenticAMD", 0x19, 0x21, false);  // 2 physical cores
  EXPECT_DOUBLE_EQ(peak_flops(zen3, CpuClock{2.0, "test"}, 1, false).gflops, 1 * 32 * 2.0);
  const PeakFlops capped = peak_flops(zen3, CpuClock{2.0, "test"}, 8, false);
  EXPECT_DOUBLE_EQ(capped.gflops, 2 * 32 * 2.0);
  EXPECT_NE(capped.derivation.find("8 threads on 2 physical cores"), std::string::npos) << capped.derivation;
}

// No GEMM can beat the FMA units it runs on: a measured rate above the derived peak means the
// table or the clock is wrong for this CPU, and MFU would read above 100%.
TEST(FmaPeak, DerivedPeakIsAtLeastTheMeasuredGemmRateOnThisMachine) {
  const CpuInfo here = detect_cpu();
  const CpuClock clock = cpu_clock();
  const int threads = at::get_num_threads();
  const PeakFlops fp32 = peak_flops(here, clock, threads, /*bf16=*/false);
  const double fp32_gemm = gemm_gflops(1024, at::kFloat, 5, 0.5);
  EXPECT_GE(fp32.gflops, fp32_gemm) << fp32.derivation << " (" << here.model_name << ")";
  const PeakFlops bf16 = peak_flops(here, clock, threads, /*bf16=*/true);
  const double bf16_gemm = gemm_gflops(512, at::kBFloat16, 3, 0.3);
  EXPECT_GE(bf16.gflops, bf16_gemm) << bf16.derivation << " (" << here.model_name << ")";
  std::printf("peak %s; fp32 GEMM %.1f GFLOP/s; bf16 peak %.1f, bf16 GEMM %.1f GFLOP/s; %d threads; %s\n",
              fp32.derivation.c_str(), fp32_gemm, bf16.gflops, bf16_gemm, threads, here.model_name.c_str());
}

}  // namespace
}  // namespace kforge::env
