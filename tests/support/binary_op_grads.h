// Test helper: a differentiable two-input op's value and both input gradients, for comparing a fast
// kernel with its reference on the same inputs.
#pragma once

#include <ATen/ATen.h>

namespace kforge::test {

/// out = f(a, b) and the gradients of sum(out * probe) (in float64) with respect to a and b.
struct BinaryOpGrads {
  at::Tensor out, da, db;
};

template <class F>
BinaryOpGrads binary_op_grads(const F& f, const at::Tensor& a0, const at::Tensor& b0, const at::Tensor& probe) {
  const at::Tensor a = a0.detach().clone().requires_grad_(true);
  const at::Tensor b = b0.detach().clone().requires_grad_(true);
  const at::Tensor out = f(a, b);
  (out.to(at::kDouble) * probe).sum().backward();
  return {out.detach(), a.grad(), b.grad()};
}

}  // namespace kforge::test
