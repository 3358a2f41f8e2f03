// MLP: the feed-forward block; SwiGLU (silu: gate/up/down) or a 2-matrix GELU/ReLU MLP (up/down).
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "linear.h"

namespace kforge::models {

class MLP : public torch::nn::Module {
 public:
  /// activation: "silu" -> down(silu(gate(x)) * up(x)); "gelu" (exact, erf) / "relu" -> down(act(up(x))).
  MLP(int64_t dim, int64_t hidden_dim, const std::string& activation);
  at::Tensor forward(const at::Tensor& x);

 private:
  enum class Act { SwiGLU, Gelu, Relu } act_;
  std::shared_ptr<Linear> gate_proj_, up_proj_, down_proj_;  // gate_proj only for SwiGLU
};

}  // namespace kforge::models
