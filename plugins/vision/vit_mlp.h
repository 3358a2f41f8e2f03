// VitMlp: the towers' feed-forward block (Hugging Face SiglipMLP / CLIPMLP): fc2(act(fc1(x))), biased.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "activation.h"
#include "vit_config.h"

namespace kforge::vision {

class VitMlp : public torch::nn::Module {
 public:
  explicit VitMlp(const VitConfig& config);
  at::Tensor forward(const at::Tensor& x);

 private:
  Activation act_;
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};

}  // namespace kforge::vision
