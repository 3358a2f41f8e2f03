// RMSNorm: x * rsqrt(mean(x^2) + eps) * weight, computed in fp32 and cast back (Llama-style).
#pragma once

#include "norm.h"

namespace kforge::builtin::models {

/// The function form, over the last dimension; weight has that dimension's size. `fused` runs the
/// fused kernel where it applies (rms_norm_kernel.h), else the composite ATen ops.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, bool fused);

class RMSNorm : public Norm {
 public:
  RMSNorm(int64_t dim, double eps, bool fused);
  at::Tensor forward(const at::Tensor& x) override { return rms_norm(x, shared(weight_), eps_, fused_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  at::Tensor weight_;  // "weight", ones
  double eps_;
  bool fused_;
};

}  // namespace kforge::builtin::models
