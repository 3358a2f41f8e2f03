// MLP: SwiGLU and the 2-matrix GELU/ReLU variants.
#include "mlp.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include "swiglu.h"

namespace kforge::builtin::models {
namespace {

at::Tensor activate(const at::Tensor& h, MlpActivation act) {
  return act == MlpActivation::Gelu ? at::gelu(h) : at::relu(h);
}

// x [..., in] times w [in, out].
at::Tensor times(const at::Tensor& x, const at::Tensor& w, LinearBackend backend) {
  return use_bf16_linear(x, w.t(), backend) ? bf16_linear(x, w.t()) : x.matmul(w);
}

}  // namespace

MlpActivation parse_mlp_activation(const std::string& activation) {
  if (activation == "silu") return MlpActivation::SwiGLU;
  if (activation == "gelu") return MlpActivation::Gelu;
  if (activation == "relu") return MlpActivation::Relu;
  throw sdk::ConfigError("[model] activation = \"" + activation + "\": must be \"silu\", \"gelu\" or \"relu\"");
}

at::Tensor ffn_forward(const at::Tensor& x, const FfnWeights& w, MlpActivation act, bool fused, LinearBackend backend) {
  if (act == MlpActivation::SwiGLU) {
    return times(swiglu(times(x, w.gate, backend), times(x, w.up, backend), fused), w.down, backend);
  }
  return times(activate(times(x, w.up, backend), act), w.down, backend);
}

MLP::MLP(int64_t dim, int64_t hidden_dim, const std::string& activation, LinearBackend backend, bool fused)
    : act_(parse_mlp_activation(activation)), fused_(fused) {
  // Registration order (gate, up, down) is KempnerForge's, so named_parameters() lists them alike.
  if (act_ == MlpActivation::SwiGLU) {
    gate_proj_ = register_module("gate_proj", std::make_shared<Linear>(dim, hidden_dim, backend));
  }
  up_proj_ = register_module("up_proj", std::make_shared<Linear>(dim, hidden_dim, backend));
  down_proj_ = register_module("down_proj", std::make_shared<Linear>(hidden_dim, dim, backend));
}

at::Tensor MLP::forward(const at::Tensor& x) {
  if (act_ == MlpActivation::SwiGLU) {
    return down_proj_->forward(swiglu(gate_proj_->forward(x), up_proj_->forward(x), fused_));
  }
  return down_proj_->forward(activate(up_proj_->forward(x), act_));
}

FfnWeights MLP::transposed_weights() const {
  return {gate_proj_ ? gate_proj_->weight().t() : at::Tensor(), up_proj_->weight().t(), down_proj_->weight().t()};
}

}  // namespace kforge::builtin::models
