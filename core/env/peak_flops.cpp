// FLOP per cycle by CPU generation, and the peak they give (see peak_flops.h).
#include "env/peak_flops.h"

#include <fmt/format.h>

#include <algorithm>

namespace kforge::env {
namespace {

constexpr int kFma256 = 2 * 8 * 2;   // two 256-bit FMA pipes x 8 fp32 lanes x 2 FLOP
constexpr int kFma512 = 2 * 16 * 2;  // two 512-bit FMA pipes x 16 fp32 lanes x 2 FLOP

FlopsPerCycle amd(const CpuInfo& cpu) {
  if (cpu.family < 0x17) return {16, "2x128-bit FMA, pre-Zen AMD"};
  if (cpu.family == 0x17)
    return cpu.model < 0x30 ? FlopsPerCycle{16, "2x128-bit FMA, Zen/Zen+"}
                            : FlopsPerCycle{kFma256, "2x256-bit FMA, Zen 2"};
  if (cpu.family == 0x19)
    return cpu.avx512f ? FlopsPerCycle{kFma256, "AVX-512 on 2x256-bit FMA, Zen 4"}
                       : FlopsPerCycle{kFma256, "2x256-bit FMA, Zen 3"};
  if (!cpu.avx512f) return {kFma256, fmt::format("2x256-bit FMA (AVX-512 not exposed), AMD family {:#x}", cpu.family)};
  // Zen 5 mobile parts (Strix Point 0x20-0x2f, Krackan Point 0x60-0x6f) split 512-bit operations
  // into 256-bit halves; server (0x00-0x1f), desktop (0x40-0x4f) and Strix Halo have 512-bit pipes.
  const bool zen5_mobile =
      cpu.family == 0x1A && ((cpu.model >= 0x20 && cpu.model < 0x30) || (cpu.model >= 0x60 && cpu.model < 0x70));
  if (zen5_mobile) return {kFma256, "AVX-512 on 2x256-bit FMA, Zen 5 mobile"};
  if (cpu.family == 0x1A) return {kFma512, "2x512-bit FMA, Zen 5"};
  return {kFma512, fmt::format("assumed 2x512-bit FMA, AMD family {:#x} (newer than Zen 5)", cpu.family)};
}

FlopsPerCycle intel(const CpuInfo& cpu) {
  if (!cpu.avx512f) return {kFma256, "2x256-bit FMA, Intel AVX2 (Haswell or newer)"};
  return {kFma512,
          "AVX-512 with 2 FMA ports, Intel (assumed: Xeon Silver/Bronze and client parts have 1, "
          "and reach half of this)"};
}

}  // namespace

FlopsPerCycle fp32_flops_per_cycle(const CpuInfo& cpu) {
  if (!cpu.fma) return {16, "no FMA: assumed a 256-bit multiply and a 256-bit add per cycle"};
  if (cpu.vendor == "AuthenticAMD" || cpu.vendor == "HygonGenuine") return amd(cpu);
  if (cpu.vendor == "GenuineIntel") return intel(cpu);
  return cpu.avx512f ? FlopsPerCycle{kFma512, "assumed 2x512-bit FMA (unknown CPU vendor '" + cpu.vendor + "')"}
                     : FlopsPerCycle{kFma256, "assumed 2x256-bit FMA (unknown CPU vendor '" + cpu.vendor + "')"};
}

FlopsPerCycle flops_per_cycle(const CpuInfo& cpu, bool bf16) {
  if (bf16 && cpu.amx_bf16) return {1024, "bf16 on AMX tiles: 16x16x32 multiply-adds per 16 cycles"};
  const FlopsPerCycle fp32 = fp32_flops_per_cycle(cpu);
  if (bf16 && cpu.avx512_bf16)
    return {2 * fp32.flops, "bf16 dot products (avx512_bf16), twice the fp32 rate of " + fp32.why};
  return fp32;
}

PeakFlops peak_flops(const CpuInfo& cpu, const CpuClock& clock, int threads, bool bf16) {
  const int cores = std::max(1, std::min(threads, cpu.physical_cores));
  const FlopsPerCycle per_cycle = flops_per_cycle(cpu, bf16);
  const double gflops = cores * per_cycle.flops * clock.ghz;
  const std::string capped = threads > cores ? fmt::format(" ({} threads on {} physical cores)", threads, cores) : "";
  return {gflops, fmt::format("{:.1f} GFLOP/s = {} core{}{} x {} FLOP/cycle ({}) x {:.2f} GHz ({})", gflops, cores,
                              cores == 1 ? "" : "s", capped, per_cycle.flops, per_cycle.why, clock.ghz, clock.source)};
}

}  // namespace kforge::env
