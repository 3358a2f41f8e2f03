// OutputHead: the bias-free LM head dim -> vocab; its weight is "proj.weight" unless tied.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>

#include "linear.h"

namespace kforge::models {

class OutputHead : public torch::nn::Module {
 public:
  /// Untied: owns "proj.weight" (vocab, dim).
  OutputHead(int64_t dim, int64_t vocab_size) {
    proj_ = register_module("proj", std::make_shared<Linear>(dim, vocab_size));
    weight_ = proj_->weight();
  }
  /// Tied: uses the embedding table and owns no parameter (the shared one is listed once, by the embedding).
  explicit OutputHead(const at::Tensor& tied_weight) : weight_(tied_weight) {}

  at::Tensor forward(const at::Tensor& x) const { return at::linear(x, weight_); }
  bool tied() const { return proj_ == nullptr; }

 private:
  std::shared_ptr<Linear> proj_;
  at::Tensor weight_;
};

}  // namespace kforge::models
