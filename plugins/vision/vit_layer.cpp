// VitLayer: attention and MLP sublayers, each behind its LayerNorm and around a residual.
#include "vit_layer.h"

namespace kforge::vision {

VitLayer::VitLayer(const VitConfig& config) {
  const auto norm = torch::nn::LayerNormOptions({config.hidden_size}).eps(config.layer_norm_eps);
  self_attn_ = register_module("self_attn", std::make_shared<VitAttention>(config));
  layer_norm1_ = register_module("layer_norm1", torch::nn::LayerNorm(norm));
  mlp_ = register_module("mlp", std::make_shared<VitMlp>(config));
  layer_norm2_ = register_module("layer_norm2", torch::nn::LayerNorm(norm));
}

at::Tensor VitLayer::forward(const at::Tensor& x) {
  const at::Tensor h = x + self_attn_->forward(layer_norm1_->forward(x));
  return h + mlp_->forward(layer_norm2_->forward(h));
}

}  // namespace kforge::vision
