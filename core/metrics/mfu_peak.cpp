// Configured or derived MFU peak (see mfu_peak.h).
#include "metrics/mfu_peak.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include "env/cpu_clock.h"
#include "env/cpu_env.h"
#include "env/peak_flops.h"

namespace kforge::metrics {

MfuPeak mfu_peak(double configured_tflops, bool bf16) {
  if (configured_tflops > 0) {
    return {configured_tflops, fmt::format("{:.1f} GFLOP/s from [metrics] peak_tflops", configured_tflops * 1e3)};
  }
  const env::PeakFlops peak = env::peak_flops(env::detect_cpu(), env::cpu_clock(), at::get_num_threads(), bf16);
  return {peak.gflops / 1e3, peak.derivation};
}

}  // namespace kforge::metrics
