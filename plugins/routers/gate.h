// Gate: the router's bias-free projection dim -> num_experts, parameter "weight" (E, dim).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace kforge::builtin::routers {

class Gate : public torch::nn::Module {
 public:
  /// Zero-initialised without drawing from the RNG; the model's init_weights sets the real values.
  Gate(int64_t dim, int64_t num_experts) { weight_ = register_parameter("weight", at::zeros({num_experts, dim})); }
  at::Tensor forward(const at::Tensor& x) const { return at::linear(x, weight_); }

 private:
  at::Tensor weight_;
};

}  // namespace kforge::builtin::routers
