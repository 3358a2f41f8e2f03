// Peak FLOP/s used as the MFU denominator: configured, or measured with an fp32 GEMM on CPU.
#pragma once

namespace kforge::metrics {

/// Achieved fp32 GEMM throughput of this process's threads, in TFLOP/s (takes ~0.2 s).
double measure_cpu_gemm_tflops();

}  // namespace kforge::metrics
