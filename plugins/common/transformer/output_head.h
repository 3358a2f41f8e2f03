// OutputHead: the bias-free LM head dim -> vocab; its weight is "proj.weight" unless tied.
#pragma once

#include <ATen/ATen.h>
#include <kforge/sdk/tensor_parallel.h>
#include <torch/nn/module.h>

#include <memory>
#include <optional>

#include "linear.h"
#include "tensor_split.h"

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

  /// Logits; under tensor parallelism this rank's vocabulary columns of them.
  at::Tensor forward(const at::Tensor& x) const { return project(split_.in(x), weight_, backend_); }
  bool tied() const { return proj_ == nullptr; }
  /// Tensor parallelism: keeps this rank's rows of the vocabulary (tied: the embedding's split keeps them) and
  /// computes their logits only, at every position (its input passes through `split`). Returns the placement of the
  /// weight it owns.
  std::optional<sdk::TensorShard> split(const TensorSplit& split) {
    split_ = split;
    if (tied()) return std::nullopt;
    return keep_slice(weight_, "proj.weight", 0, *split.tp, "[model] vocab_size");
  }

 private:
  LinearBackend backend_;
  std::shared_ptr<Linear> proj_;
  at::Tensor weight_;
  TensorSplit split_;
};

}  // namespace kforge::builtin::models
