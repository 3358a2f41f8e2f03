// Activation: the elementwise functions of the vision towers (Hugging Face hidden_act names) and of the
// adapters ([adapter] activation).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>

namespace kforge::vision {

using Activation = std::function<at::Tensor(const at::Tensor&)>;

/// Hugging Face's hidden_act: "gelu_pytorch_tanh" (SigLIP: gelu, tanh approximation), "quick_gelu"
/// (CLIP: x * sigmoid(1.702 x)) or "gelu" (exact, erf). Anything else throws sdk::ConfigError naming
/// `origin` (the config file and key) and the value.
Activation tower_activation(const std::string& hidden_act, const std::string& origin);

/// [adapter] activation: "gelu" (exact, erf, as torch.nn.GELU()), "silu" or "relu"; anything else throws
/// sdk::ConfigError naming the key and the allowed values.
Activation adapter_activation(const std::string& name);

}  // namespace kforge::vision
