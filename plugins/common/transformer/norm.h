// Norm: the interface of the normalisation layers ([model] norm_type) and the factory picking one.
#pragma once

#include <kforge/sdk/tensor_parallel.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>

namespace kforge::builtin::models {

class Norm : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;
  /// Tensor parallelism: each rank applies the norm to its part of the data (its heads, or its part of the
  /// positions under sequence parallelism), so its parameters' gradients are summed over `tp` (which must outlive
  /// the module).
  void sum_gradients_over(const sdk::TensorParallel& tp) { tp_ = &tp; }

 protected:
  /// A parameter as forward() uses it: itself, entered into the group after sum_gradients_over().
  at::Tensor shared(const at::Tensor& p) const { return tp_ ? tp_->enter(p) : p; }

 private:
  const sdk::TensorParallel* tp_ = nullptr;
};

/// "rmsnorm" -> RMSNorm(dim, eps), "layernorm" -> LayerNorm(dim, eps).
std::shared_ptr<Norm> make_norm(const std::string& norm_type, int64_t dim, double eps, bool fused);

}  // namespace kforge::builtin::models
