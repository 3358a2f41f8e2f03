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
  /// ranks' lookups are summed over tp.
  at::Tensor forward(const at::Tensor& tokens) const {
    if (tp_ == nullptr) return at::embedding(weight_, tokens);
    const int64_t rows = weight_.size(0), first = rows * tp_->rank();
    const at::Tensor here = tokens.ge(first).logical_and(tokens.lt(first + rows)).unsqueeze(-1);
    return tp_->sum(at::embedding(weight_, (tokens - first).clamp(0, rows - 1)) * here);
  }
  const at::Tensor& weight() const { return weight_; }
  /// Tensor parallelism: keeps this rank's rows of the vocabulary (`tp` must outlive the module); returns their
  /// placement.
  sdk::TensorShard split(const sdk::TensorParallel& tp) {
    tp_ = &tp;
    return keep_slice(weight_, "embedding.weight", 0, tp, "[model] vocab_size");
  }

 private:
  std::shared_ptr<torch::nn::Module> table_;
  at::Tensor weight_;
  const sdk::TensorParallel* tp_ = nullptr;
};

}  // namespace kforge::builtin::models
