// Gradient norms and clipping.
#include "parallel/gradient_norm.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace kforge::parallel {

double clip_grad_norm(const std::vector<sdk::NamedParameter>& params, double max_norm) {
  std::vector<at::Tensor> norms;
  for (const auto& p : params) {
    if (p.tensor.grad().defined()) norms.push_back(at::norm(p.tensor.grad(), 2));
  }
  if (norms.empty()) return 0.0;
  const at::Tensor total = at::norm(at::stack(norms), 2);
  const at::Tensor coef = at::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (const auto& p : params) {
    if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(coef);
  }
  return total.item<double>();
}

at::Tensor squared_norm(const at::Tensor& grad) {
  const at::ScalarType accumulate = grad.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  return at::norm(grad, 2, accumulate).to(at::kDouble).square();
}

double scale_to_norm(const std::vector<sdk::NamedParameter>& params, double norm, double max_norm) {
  const double coef = std::min(1.0, max_norm / (norm + 1e-6));
  for (const auto& p : params) {
    if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(coef);
  }
  return norm;
}

}  // namespace kforge::parallel
