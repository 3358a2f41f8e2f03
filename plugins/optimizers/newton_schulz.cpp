// Newton–Schulz iteration (see newton_schulz.h).
#include "newton_schulz.h"

#include <ATen/ATen.h>

namespace kforge::builtin::optimizers {

at::Tensor newton_schulz(const at::Tensor& g, int64_t steps) {
  constexpr double a = 3.4445, b = -4.7750, c = 2.0315;
  at::Tensor x = g.reshape({g.size(0), -1}).to(at::kFloat);
  const bool tall = x.size(0) > x.size(1);
  if (tall) x = x.t();
  x = x / (x.norm().item<double>() + 1e-7);
  for (int64_t i = 0; i < steps; ++i) {
    const at::Tensor gram = at::mm(x, x.t());
    const at::Tensor poly = at::add(gram * b, at::mm(gram, gram), c);
    x = at::mm(poly, x).add_(x, a);
  }
  if (tall) x = x.t();
  return x.contiguous();
}

}  // namespace kforge::builtin::optimizers
