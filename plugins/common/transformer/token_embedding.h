// TokenEmbedding: token id -> vector lookup; its table is "embedding.weight" (vocab, dim).
#pragma once

#include <ATen/ATen.h>
#include <kforge/sdk/tensor_parallel.h>
#include <torch/nn/module.h>

#include <memory>

#include "tensor_split.h"

namespace kforge::builtin::models {

class TokenEmbedding : public torch::nn::Module {
 public:
  TokenEmbedding(int64_t vocab_size, int64_t dim) {
    table_ = register_module("embedding", std::make_shared<torch::nn::Module>("Embedding"));
    weight_ = table_->register_parameter("weight", at::empty({vocab_size, dim}));
  }
  /// Tensor parallelism: each rank looks up the tokens of its rows of the vocabulary, the others give zeros, and the
  /// ranks' lookups are summed over tp (with sequence parallelism, into each rank's part of the positions).
  at::Tensor forward(const at::Tensor& tokens) const {
    if (split_.tp == nullptr) return at::embedding(weight_, tokens);
    const int64_t rows = weight_.size(0), first = rows * split_.tp->rank();
    const at::Tensor here = tokens.ge(first).logical_and(tokens.lt(first + rows)).unsqueeze(-1);
    return split_.out(at::embedding(weight_, (tokens - first).clamp(0, rows - 1)) * here);
  }
  const at::Tensor& weight() const { return weight_; }
  /// Tensor parallelism: keeps this rank's rows of the vocabulary (`tp` must outlive the module); returns their
  /// placement.
  sdk::TensorShard split(const TensorSplit& split) {
    split_ = split;
    return keep_slice(weight_, "embedding.weight", 0, *split.tp, "[model] vocab_size");
  }

 private:
  std::shared_ptr<torch::nn::Module> table_;
  at::Tensor weight_;
  TensorSplit split_;
};

}  // namespace kforge::builtin::models
