// Timed at::mm (see gemm_rate.h).
#include "env/gemm_rate.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

namespace kforge::env {

double gemm_gflops(int64_t n, at::ScalarType dtype, int repeats, double budget_s) {
  const at::NoGradGuard no_grad;
  const at::Tensor a = at::rand({n, n}).to(dtype);
  const at::Tensor b = at::rand({n, n}).to(dtype);
  at::Tensor c = at::mm(a, b);  // warm-up: thread pool, BLAS buffers, caches
  double best = 0.0, spent = 0.0;
  for (int rep = 0; rep < repeats && spent < budget_s; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spent += seconds;
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) / seconds / 1e9);
  }
  return best;
}

}  // namespace kforge::env
