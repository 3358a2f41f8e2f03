// Measured fp32 GEMM peak (see peak_flops.h).
#include "metrics/peak_flops.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

namespace kforge::metrics {
namespace {

// Best TFLOP/s of n x n x n products after one warm-up, over up to `repeats` runs or `budget_s`.
double best_gemm_tflops(int64_t n, int repeats, double budget_s) {
  const at::Tensor a = at::rand({n, n});
  const at::Tensor b = at::rand({n, n});
  at::Tensor c = at::mm(a, b);  // warm-up: thread pool, BLAS buffers, caches
  double best = 0.0, spent = 0.0;
  for (int rep = 0; rep < repeats && spent < budget_s; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spent += seconds;
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) / seconds / 1e12);
  }
  return best;
}

}  // namespace

double measure_cpu_gemm_tflops() {
  at::NoGradGuard no_grad;
  double best = 0.0;
  for (const int64_t n : {512, 768, 1024}) best = std::max(best, best_gemm_tflops(n, 6, 0.1));
  return best;
}

}  // namespace kforge::metrics
