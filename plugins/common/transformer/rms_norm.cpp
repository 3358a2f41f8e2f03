// RMSNorm in fp32.
#include "rms_norm.h"

#include <ATen/ATen.h>

#include "rms_norm_kernel.h"

namespace kforge::builtin::models {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, bool fused) {
  if (fused && fused_rms_norm_applies(x, weight)) return fused_rms_norm(x, weight, eps);
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (normed * weight).to(x.scalar_type());
}

RMSNorm::RMSNorm(int64_t dim, double eps, bool fused) : eps_(eps), fused_(fused) {
  weight_ = register_parameter("weight", at::ones({dim}));
}

}  // namespace kforge::builtin::models
