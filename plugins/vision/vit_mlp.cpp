// VitMlp: fc1 -> the tower's activation -> fc2.
#include "vit_mlp.h"

namespace kforge::vision {

VitMlp::VitMlp(const VitConfig& config) : act_(tower_activation(config.hidden_act, "hidden_act")) {
  fc1_ = register_module("fc1", torch::nn::Linear(config.hidden_size, config.intermediate_size));
  fc2_ = register_module("fc2", torch::nn::Linear(config.intermediate_size, config.hidden_size));
}

at::Tensor VitMlp::forward(const at::Tensor& x) { return fc2_->forward(act_(fc1_->forward(x))); }

}  // namespace kforge::vision
