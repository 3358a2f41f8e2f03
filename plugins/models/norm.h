// Norm: the interface of the normalisation layers ([model] norm_type) and the factory picking one.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>

namespace kforge::builtin::models {

class Norm : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;
};

/// "rmsnorm" -> RMSNorm(dim, eps), "layernorm" -> LayerNorm(dim, eps).
std::shared_ptr<Norm> make_norm(const std::string& norm_type, int64_t dim, double eps, bool fused);

}  // namespace kforge::builtin::models
