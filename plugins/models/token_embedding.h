// TokenEmbedding: token id -> vector lookup; its table is "embedding.weight" (vocab, dim).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>

namespace kforge::builtin::models {

class TokenEmbedding : public torch::nn::Module {
 public:
  TokenEmbedding(int64_t vocab_size, int64_t dim) {
    table_ = register_module("embedding", std::make_shared<torch::nn::Module>("Embedding"));
    weight_ = table_->register_parameter("weight", at::empty({vocab_size, dim}));
  }
  at::Tensor forward(const at::Tensor& tokens) const { return at::embedding(weight_, tokens); }
  const at::Tensor& weight() const { return weight_; }

 private:
  std::shared_ptr<torch::nn::Module> table_;
  at::Tensor weight_;
};

}  // namespace kforge::builtin::models
