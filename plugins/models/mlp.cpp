// MLP: SwiGLU and the 2-matrix GELU/ReLU variants.
#include "mlp.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::models {

MLP::MLP(int64_t dim, int64_t hidden_dim, const std::string& activation) {
  if (activation == "silu") act_ = Act::SwiGLU;
  else if (activation == "gelu") act_ = Act::Gelu;
  else if (activation == "relu") act_ = Act::Relu;
  else throw sdk::ConfigError("[model] activation = \"" + activation + "\": must be \"silu\", \"gelu\" or \"relu\"");
  // Registration order (gate, up, down) is KempnerForge's, so named_parameters() lists them alike.
  if (act_ == Act::SwiGLU) gate_proj_ = register_module("gate_proj", std::make_shared<Linear>(dim, hidden_dim));
  up_proj_ = register_module("up_proj", std::make_shared<Linear>(dim, hidden_dim));
  down_proj_ = register_module("down_proj", std::make_shared<Linear>(hidden_dim, dim));
}

at::Tensor MLP::forward(const at::Tensor& x) {
  switch (act_) {
    case Act::SwiGLU: return down_proj_->forward(at::silu(gate_proj_->forward(x)) * up_proj_->forward(x));
    case Act::Gelu: return down_proj_->forward(at::gelu(up_proj_->forward(x)));
    case Act::Relu: return down_proj_->forward(at::relu(up_proj_->forward(x)));
  }
  return {};
}

}  // namespace kforge::models
