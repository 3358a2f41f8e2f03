// The MFU denominator of one rank: [metrics] peak_tflops when set, else the CPU's theoretical peak
// for the run's threads and precision (env/peak_flops.h), with how it was derived, for the log.
#pragma once

#include <string>

namespace kforge::metrics {

struct MfuPeak {
  double tflops = 0;
  std::string derivation;  ///< "from [metrics] peak_tflops" or the FMA-peak arithmetic
};

/// configured_tflops > 0 wins; otherwise the peak of at::get_num_threads() threads on this CPU,
/// in bf16 when the run's mixed precision is bf16.
MfuPeak mfu_peak(double configured_tflops, bool bf16);

}  // namespace kforge::metrics
