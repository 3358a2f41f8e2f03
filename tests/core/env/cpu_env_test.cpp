// The CPU environment probe (detect_cpu): properties every x86-64 CPU satisfies, whatever its model,
// so the test holds on any machine: the /proc/cpuinfo flags agree with CPUID as the compiler's runtime
// reads it, the vector ISAs nest, LibTorch's kernel ISA is one the CPU has, and the CPU counts nest.
#include "env/cpu_env.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge::env {
namespace {

#if defined(__x86_64__)

TEST(CpuEnv, VendorFamilyAndModelNameComeFromCpuid) {
  const CpuInfo cpu = detect_cpu();
  EXPECT_EQ(cpu.vendor.size(), 12u) << "CPUID leaf 0 vendor: '" << cpu.vendor << "'";
  EXPECT_GE(cpu.family, 1);
  EXPECT_GE(cpu.model, 0);
  EXPECT_FALSE(cpu.model_name.empty());
}

TEST(CpuEnv, FeatureFlagsAgreeWithTheCompilersCpuid) {
  const CpuInfo cpu = detect_cpu();
  EXPECT_EQ(cpu.avx2, __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(cpu.fma, __builtin_cpu_supports("fma") != 0);
  EXPECT_EQ(cpu.avx512f, __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(cpu.avx512_bf16, __builtin_cpu_supports("avx512bf16") != 0);
}

TEST(CpuEnv, VectorExtensionsNest) {
  const CpuInfo cpu = detect_cpu();
  if (cpu.avx512f) {
    EXPECT_TRUE(cpu.avx2) << "an AVX-512 CPU has AVX2";
    EXPECT_TRUE(cpu.fma) << "an AVX-512 CPU has FMA";
  }
  if (cpu.avx512_bf16) EXPECT_TRUE(cpu.avx512f) << "avx512_bf16 extends AVX-512F";
  EXPECT_EQ(cpu.native_bf16(), cpu.avx512_bf16 || cpu.amx_bf16);
}

TEST(CpuEnv, LibTorchKernelIsaIsOneTheCpuHas) {
  const CpuInfo cpu = detect_cpu();
  const std::string& isa = cpu.torch_capability;
  EXPECT_TRUE(isa == "DEFAULT" || isa == "AVX2" || isa == "AVX512") << isa;
  if (isa == "AVX512") EXPECT_TRUE(cpu.avx512f);
  if (isa == "AVX2" || isa == "AVX512") {
    EXPECT_TRUE(cpu.avx2) << isa;
    EXPECT_TRUE(cpu.fma) << isa;
  }
}

#endif

TEST(CpuEnv, CpuCountsNest) {
  const CpuInfo cpu = detect_cpu();
  EXPECT_GE(cpu.physical_cores, 1);
  EXPECT_LE(cpu.physical_cores, cpu.usable_cpus) << "cores counted among the usable CPUs";
  EXPECT_LE(cpu.usable_cpus, cpu.logical_cpus) << "the affinity mask is a subset of the online CPUs";
}

}  // namespace
}  // namespace kforge::env
