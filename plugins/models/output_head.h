// OutputHead: the bias-free LM head dim -> vocab; its weight is "proj.weight" unless tied.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>

#include "linear.h"

namespace kforge::builtin::models {

class OutputHead : public torch::nn::Module {
 public:
  /// Untied: owns "proj.weight" (vocab, dim).
  OutputHead(int64_t dim, int64_t vocab_size, LinearBackend backend) : backend_(backend) {
    proj_ = register_module("proj", std::make_shared<Linear>(dim, vocab_size, backend));
    weight_ = proj_->weight();
  }
  /// Tied: uses the embedding table and owns no parameter (the shared one is listed once, by the embedding).
  OutputHead(const at::Tensor& tied_weight, LinearBackend backend) : backend_(backend), weight_(tied_weight) {}

  at::Tensor forward(const at::Tensor& x) const { return project(x, weight_, backend_); }
  bool tied() const { return proj_ == nullptr; }

 private:
  LinearBackend backend_;
  std::shared_ptr<Linear> proj_;
  at::Tensor weight_;
};

}  // namespace kforge::builtin::models
