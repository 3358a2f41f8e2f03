// The CPU's theoretical peak FLOP/s, the MFU denominator: cores x FLOP per cycle per core x clock,
// with the FLOP per cycle from the CPUID vendor, family and model and the ISA flags.
#pragma once

#include <string>

#include "env/cpu_clock.h"
#include "env/cpu_env.h"

namespace kforge::env {

struct FlopsPerCycle {
  int flops = 0;    ///< per core per cycle
  std::string why;  ///< the execution units behind it, and what was assumed
};

/// fp32 FLOP per cycle per core of the CPU's FMA units (an FMA is 2 FLOP): 2x256-bit FMA = 32,
/// 2x512-bit = 64. Where the model does not tell (Intel AVX-512 parts have 1 or 2 FMA ports), the
/// higher value, so that MFU never exceeds 100%; `why` says so.
FlopsPerCycle fp32_flops_per_cycle(const CpuInfo& cpu);

/// FLOP per cycle per core of the arithmetic a run in `bf16` (mixed precision) can reach: AMX
/// tiles or AVX512_BF16 dot products when the CPU has them, else the fp32 FMA rate (LibTorch
/// emulates bf16 in fp32).
FlopsPerCycle flops_per_cycle(const CpuInfo& cpu, bool bf16);

struct PeakFlops {
  double gflops = 0;
  std::string derivation;  ///< "230.4 GFLOP/s = 2 cores x 32 FLOP/cycle (...) x 3.60 GHz (...)"
};

/// The peak of `threads` intra-op threads: cores used = threads, capped by cpu.physical_cores.
PeakFlops peak_flops(const CpuInfo& cpu, const CpuClock& clock, int threads, bool bf16);

}  // namespace kforge::env
