// Linear: a bias-free projection y = x W^T with parameter "weight" of shape (out, in), computed by
// at::linear or, for fp32 outside autocast, by oneDNN's sgemm with its own backward ([model] linear_backend).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <string>

namespace kforge::builtin::models {

enum class LinearBackend { Aten, OneDnn };

/// [model] linear_backend: "auto" -> OneDnn when the process has dnnl_sgemm, else Aten; "onednn"
/// (a ConfigError when it is missing); "aten".
LinearBackend resolve_linear_backend(const std::string& setting);

/// True when onednn_linear takes (x, weight): float32 CPU strided tensors, a 2-D weight and x's last
/// dimension equal to its columns, and no CPU autocast active (autocast must see at::linear).
bool onednn_linear_applies(const at::Tensor& x, const at::Tensor& weight);

/// x [..., in] W^T for W [out, in] through dnnl_sgemm, differentiable in x and W (each gradient only
/// when it is needed); equal to at::linear up to GEMM summation order.
at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight);

/// onednn_linear where `backend` is OneDnn and it applies, else at::linear.
at::Tensor project(const at::Tensor& x, const at::Tensor& weight, LinearBackend backend);

class Linear : public torch::nn::Module {
 public:
  Linear(int64_t in_features, int64_t out_features, LinearBackend backend) : backend_(backend) {
    weight_ = register_parameter("weight", at::empty({out_features, in_features}));
  }
  at::Tensor forward(const at::Tensor& x) const { return project(x, weight_, backend_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  LinearBackend backend_;
  at::Tensor weight_;
};

}  // namespace kforge::builtin::models
