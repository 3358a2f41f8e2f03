// VitAttention: the towers' bidirectional multi-head self-attention (Hugging Face SiglipAttention /
// CLIPAttention): biased q_proj, k_proj, v_proj and out_proj, softmax(q k^T / sqrt(head_dim)) v, no mask.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "vit_config.h"

namespace kforge::vision {

class VitAttention : public torch::nn::Module {
 public:
  explicit VitAttention(const VitConfig& config);
  /// x: (B, S, hidden) -> (B, S, hidden).
  at::Tensor forward(const at::Tensor& x);

 private:
  int64_t heads_, head_dim_;
  torch::nn::Linear q_proj_{nullptr}, k_proj_{nullptr}, v_proj_{nullptr}, out_proj_{nullptr};
};

}  // namespace kforge::vision
