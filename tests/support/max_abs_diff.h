// The largest elementwise |a - b| of two tensors, computed in float64 so the check adds no rounding.
#pragma once

#include <ATen/core/Tensor.h>

namespace kforge::test {

double max_abs_diff(const at::Tensor& a, const at::Tensor& b);

}  // namespace kforge::test
