// Achieved GEMM throughput of this process's threads: the best of a few timed at::mm calls.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

namespace kforge::env {

/// GFLOP/s of an n x n x n at::mm in `dtype` on the current intra-op threads: one warm-up, then
/// the best of up to `repeats` timed products, stopping early once `budget_s` seconds are spent.
/// The best rather than the mean, so load from other processes lowers it as little as possible.
double gemm_gflops(int64_t n, at::ScalarType dtype, int repeats, double budget_s);

}  // namespace kforge::env
