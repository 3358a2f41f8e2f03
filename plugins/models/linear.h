// Linear: a bias-free projection y = x W^T with parameter "weight" of shape (out, in).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace kforge::models {

class Linear : public torch::nn::Module {
 public:
  Linear(int64_t in_features, int64_t out_features) {
    weight_ = register_parameter("weight", at::empty({out_features, in_features}));
  }
  at::Tensor forward(const at::Tensor& x) const { return at::linear(x, weight_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  at::Tensor weight_;
};

}  // namespace kforge::models
