// MLP: SwiGLU and the 2-matrix GELU/ReLU variants.
#include "mlp.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include "fp16_linear.h"
#include "swiglu.h"
#include "tensor_split.h"

namespace kforge::builtin::models {
namespace {

at::Tensor activate(const at::Tensor& h, MlpActivation act) {
  return act == MlpActivation::Gelu ? at::gelu(h) : at::relu(h);
}

// x [..., in] times w [in, out].
at::Tensor times(const at::Tensor& x, const at::Tensor& w, LinearBackend backend) {
  if (fp16_linear_applies(x, w.t())) return fp16_linear(x, w.t());
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
  const at::Tensor in = split_.in(x);
  const at::Tensor hidden = act_ == MlpActivation::SwiGLU
                                ? swiglu(gate_proj_->forward(in), up_proj_->forward(in), fused_)
                                : activate(up_proj_->forward(in), act_);
  const at::Tensor out = down_proj_->forward(hidden);
  return split_.out(out);
}

std::vector<sdk::TensorShard> MLP::split(const TensorSplit& split) {
  split_ = split;
  const sdk::TensorParallel& tp = *split.tp;
  const std::string hidden = "the MLP's hidden size ([model] ffn_hidden_dim, or dim x ffn_dim_multiplier rounded)";
  std::vector<sdk::TensorShard> out;
  if (gate_proj_) out.push_back(keep_slice(gate_proj_->weight(), "gate_proj.weight", 0, tp, hidden));
  out.push_back(keep_slice(up_proj_->weight(), "up_proj.weight", 0, tp, hidden));
  out.push_back(keep_slice(down_proj_->weight(), "down_proj.weight", 1, tp, hidden));
  return out;
}

FfnWeights MLP::transposed_weights() const {
  return {gate_proj_ ? gate_proj_->weight().t() : at::Tensor(), up_proj_->weight().t(), down_proj_->weight().t()};
}

}  // namespace kforge::builtin::models
