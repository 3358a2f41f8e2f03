#include "metrics/peak_flops.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

namespace kforge::metrics {

double measure_cpu_gemm_tflops() {
  constexpr int64_t n = 1024;
  at::NoGradGuard no_grad;
  const at::Tensor a = at::rand({n, n});
  const at::Tensor b = at::rand({n, n});
  at::Tensor c = at::mm(a, b);  // warm-up
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * n * n * n / seconds / 1e12);
  }
  return best;
}

}  // namespace kforge::metrics
