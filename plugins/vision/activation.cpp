// Activation: the tower and adapter activation functions by name.
#include "activation.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::vision {

Activation tower_activation(const std::string& hidden_act, const std::string& origin) {
  if (hidden_act == "gelu_pytorch_tanh") return [](const at::Tensor& x) { return at::gelu(x, "tanh"); };
  if (hidden_act == "quick_gelu") return [](const at::Tensor& x) { return x * at::sigmoid(1.702 * x); };
  if (hidden_act == "gelu") return [](const at::Tensor& x) { return at::gelu(x); };
  throw sdk::ConfigError(origin + " = \"" + hidden_act +
                         "\": unsupported activation (supported: gelu_pytorch_tanh, quick_gelu, gelu)");
}

Activation adapter_activation(const std::string& name) {
  if (name == "gelu") return [](const at::Tensor& x) { return at::gelu(x); };
  if (name == "silu") return [](const at::Tensor& x) { return at::silu(x); };
  if (name == "relu") return [](const at::Tensor& x) { return at::relu(x); };
  throw sdk::ConfigError("[adapter] activation = \"" + name + "\": unknown activation (allowed: gelu, silu, relu)");
}

}  // namespace kforge::vision
