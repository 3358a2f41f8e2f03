#include "support/max_abs_diff.h"

#include <ATen/ATen.h>

namespace kforge::test {

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.detach().to(at::kDouble) - b.detach().to(at::kDouble)).abs().max().item<double>();
}

}  // namespace kforge::test
