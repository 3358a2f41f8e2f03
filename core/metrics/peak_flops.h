// Peak FLOP/s used as the MFU denominator: configured, or measured with fp32 GEMMs on CPU.
#pragma once

namespace kforge::metrics {

/// Achieved fp32 GEMM throughput of this process's threads, in TFLOP/s: the best of several
/// square sizes (512, 768, 1024), each warmed up and repeated, within about 0.3 s in all. The best
/// rather than the mean, so a transient load from other processes lowers it as little as possible.
double measure_cpu_gemm_tflops();

}  // namespace kforge::metrics
