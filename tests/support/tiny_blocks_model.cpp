#include "tiny_blocks_model.h"

#include <ATen/CPUGeneratorImpl.h>

namespace kforge::test {

TinyModel::TinyModel(bool bypass) : bypass_(bypass) {
  at::Generator gen = at::detail::createCPUGenerator(7);  // its own: ranks are threads of one process
  embed_ = register_parameter("embed", at::randn({kTinyVocab, kTinyDim}, gen));
  head_ = register_parameter("head", at::randn({kTinyVocab, kTinyDim}, gen) * 0.5);
  w_ = register_parameter("b0_w", at::randn({kTinyDim, kTinyDim}, gen) * 0.4);
  g_ = register_parameter("b0_g", at::randn({kTinyDim}, gen));
  a_ = register_parameter("b1_a", at::randn({5, kTinyDim}, gen) * 0.4);
  b_ = register_parameter("b1_b", at::randn({5, kTinyDim}, gen) * 0.4);
  c_ = register_parameter("b2_c", at::randn({1, kTinyDim}, gen));
}

at::Tensor TinyModel::forward(const at::Tensor& tokens) {
  at::Tensor x = embed_.index_select(0, tokens.reshape({-1})).view({tokens.size(0), tokens.size(1), kTinyDim});
  x = run_block(0, x, [&](const at::Tensor& in) { return in + at::tanh(at::matmul(in, w_.t())) * g_; });
  const BlockFn block1 = [&](const at::Tensor& in) { return in + at::matmul(at::tanh(at::matmul(in, a_.t())), b_); };
  x = bypass_ ? block1(x) : run_block(1, x, block1);
  x = run_block(2, x, [&](const at::Tensor& in) {
    at::Tensor out = in * at::sigmoid(c_[0]);
    if (mutate_in_forward) {
      at::NoGradGuard no_grad;
      c_.add_(0.5);
    }
    return out;
  });
  return at::matmul(x, head_.t());
}

std::vector<sdk::ModelBlock> TinyModel::blocks() const {
  return {{"b0", {"b0_w", "b0_g"}}, {"b1", {"b1_a", "b1_b"}}, {"b2", {"b2_c"}}};
}

at::Tensor tiny_tokens(int rank) {
  return at::arange(rank * 3, rank * 3 + 16, at::kLong).remainder(kTinyVocab).view({2, 8});
}

at::Tensor tiny_loss(const at::Tensor& logits, int rank) {
  const at::Tensor labels = (tiny_tokens(rank) * 5 + 1).remainder(kTinyVocab);
  return at::cross_entropy_loss(logits.reshape({-1, kTinyVocab}), labels.reshape({-1}));
}

std::map<std::string, at::Tensor> tiny_reference_grads(const std::string& frozen) {
  TinyModel model;
  if (!frozen.empty()) model.named_parameters()[frozen].requires_grad_(false);
  const at::Tensor loss = (tiny_loss(model.forward(tiny_tokens(0)), 0) + tiny_loss(model.forward(tiny_tokens(1)), 1)) / 2;
  loss.backward();
  std::map<std::string, at::Tensor> out;
  for (const auto& item : model.named_parameters()) out.emplace(item.key(), item.value().grad());
  return out;
}

}  // namespace kforge::test
