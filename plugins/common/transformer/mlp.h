// MLP: the feed-forward block; SwiGLU (silu: gate/up/down) or a 2-matrix GELU/ReLU MLP (up/down).
// Also the weight-level form (FfnWeights, ffn_forward) that MoE experts share.
#pragma once

#include <kforge/sdk/tensor_parallel.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "linear.h"
#include "tensor_split.h"

namespace kforge::builtin::models {

enum class MlpActivation { SwiGLU, Gelu, Relu };

/// [model] activation: "silu" -> SwiGLU, "gelu" (exact, erf), "relu"; anything else is a ConfigError.
MlpActivation parse_mlp_activation(const std::string& activation);

/// One MLP's weights in (in, out) layout; gate is undefined for the 2-matrix MLPs.
struct FfnWeights {
  at::Tensor gate, up, down;
};

/// SwiGLU: (silu(x gate) * (x up)) down; GELU/ReLU: act(x up) down. Each product is x.matmul(w), or fp16_linear
/// where that applies (an fp16 step on the CPU), or bf16_linear where use_bf16_linear(x, w^T, backend) (bf16
/// autocast on a CPU without bf16 instructions).
at::Tensor ffn_forward(const at::Tensor& x, const FfnWeights& w, MlpActivation act, bool fused,
                       LinearBackend backend = LinearBackend::Aten);

class MLP : public torch::nn::Module {
 public:
  /// activation: "silu" -> down(silu(gate(x)) * up(x)); "gelu" (exact, erf) / "relu" -> down(act(up(x))).
  MLP(int64_t dim, int64_t hidden_dim, const std::string& activation, LinearBackend backend, bool fused);
  at::Tensor forward(const at::Tensor& x);
  /// Views of the (out, in) weights transposed to (in, out), for ffn_forward.
  FfnWeights transposed_weights() const;
  /// Tensor parallelism: keeps this rank's hidden units (gate/up rows, down columns); from then on its input and
  /// output pass through `split`. Returns the slices' placements, named relative to this module.
  std::vector<sdk::TensorShard> split(const TensorSplit& split);

 private:
  MlpActivation act_;
  bool fused_;                                               ///< [model] fused_kernels: the fused SwiGLU op
  std::shared_ptr<Linear> gate_proj_, up_proj_, down_proj_;  // gate_proj only for SwiGLU
  TensorSplit split_;                                        ///< set by split()
};

}  // namespace kforge::builtin::models
