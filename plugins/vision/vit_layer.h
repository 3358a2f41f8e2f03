// VitLayer: one pre-norm encoder layer of the towers (Hugging Face SiglipEncoderLayer /
// CLIPEncoderLayer): x + self_attn(layer_norm1(x)), then + mlp(layer_norm2(.)).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>

#include <memory>

#include "vit_attention.h"
#include "vit_mlp.h"

namespace kforge::vision {

class VitLayer : public torch::nn::Module {
 public:
  explicit VitLayer(const VitConfig& config);
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::LayerNorm layer_norm1_{nullptr}, layer_norm2_{nullptr};
  std::shared_ptr<VitAttention> self_attn_;
  std::shared_ptr<VitMlp> mlp_;
};

}  // namespace kforge::vision
