// RMSNorm: x * rsqrt(mean(x^2) + eps) * weight, computed in fp32 and cast back (Llama-style).
#pragma once

#include "norm.h"

namespace kforge::models {

/// The function form, over the last dimension; weight has that dimension's size.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

class RMSNorm : public Norm {
 public:
  RMSNorm(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x) override { return rms_norm(x, weight_, eps_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  at::Tensor weight_;  // "weight", ones
  double eps_;
};

}  // namespace kforge::models
