// LayerNorm over the last dimension (as torch.nn.LayerNorm).
#include "layer_norm.h"

#include <ATen/ATen.h>

namespace kforge::builtin::models {

LayerNorm::LayerNorm(int64_t dim, double eps) : dim_(dim), eps_(eps) {
  weight_ = register_parameter("weight", at::ones({dim}));
  bias_ = register_parameter("bias", at::zeros({dim}));
}

at::Tensor LayerNorm::forward(const at::Tensor& x) {
  return at::layer_norm(x, {dim_}, shared(weight_), shared(bias_), eps_);
}

}  // namespace kforge::builtin::models
