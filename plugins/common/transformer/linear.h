// Linear: a bias-free projection y = x W^T with parameter "weight" of shape (out, in), computed by
// at::linear or oneDNN's sgemm with its own backward ([model] linear_backend): for fp32 outside autocast, and under
// bf16 autocast on a CPU without bf16 instructions, where it multiplies the bf16-rounded operands in fp32; or by
// float8_linear for the layers a [train] mixed_precision = "fp8" run converts.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <string>

namespace kforge::builtin::models {

/// Float8: float8_linear (float8_linear.h), whatever the autocast state.
enum class LinearBackend { Aten, OneDnn, Float8 };

/// [model] linear_backend: "auto" -> OneDnn when the process has dnnl_sgemm, else Aten; "onednn"
/// (a ConfigError when it is missing); "aten".
LinearBackend resolve_linear_backend(const std::string& setting);

/// The backend of the layers KempnerForge's apply_float8 converts to Float8Linear (attention's projections, dense
/// MLPs, the output head; not MoE experts, shared experts or routers): Float8 when `float8` ([train]
/// mixed_precision = "fp8"), else resolve_linear_backend(setting).
LinearBackend dense_linear_backend(const std::string& setting, bool float8);

/// True when onednn_linear takes (x, weight): float32 CPU strided tensors, a 2-D weight and x's last
/// dimension equal to its columns, and no CPU autocast active (autocast must see at::linear).
bool onednn_linear_applies(const at::Tensor& x, const at::Tensor& weight);

/// x [..., in] W^T for W [out, in] through dnnl_sgemm, differentiable in x and W (each gradient only
/// when it is needed); equal to at::linear up to GEMM summation order.
at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight);

/// True when bf16_linear takes (x, weight): float32 or bfloat16 CPU strided x [..., in], a float32 2-D weight
/// [out, in], under CPU autocast to bfloat16.
bool bf16_linear_applies(const at::Tensor& x, const at::Tensor& weight);

/// What at::linear computes under bf16 autocast, through dnnl_sgemm: x and weight rounded to bf16, multiplied and
/// summed in fp32 (a product of two bf16 values is exact in fp32, and oneDNN's bf16 GEMM accumulates in fp32 too), the
/// output rounded to bf16. Backward: dx = dy W_bf16, rounded to bf16 as autocast's would be; dW = dy^T x_bf16 in fp32
/// (autocast's is rounded to bf16 first). Saves x and W in bf16. Throws sdk::Error unless bf16_linear_applies.
at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight);

/// Whether the CPU has bf16 dot-product instructions (avx512_bf16; AMX CPUs have them too), with which oneDNN's own
/// bf16 GEMMs are fast; without them LibTorch emulates them slowly. False under a KFORGE_CPU_CAPABILITY cap below
/// avx512 (a narrower CPU has none).
bool cpu_has_bf16_instructions();

/// Whether `project` takes bf16_linear for (x, weight): `backend` is OneDnn, bf16_linear applies and the CPU has no
/// bf16 instructions.
bool use_bf16_linear(const at::Tensor& x, const at::Tensor& weight, LinearBackend backend);

/// float8_linear where `backend` is Float8; fp16_linear where that applies (an fp16 step on the CPU); onednn_linear
/// where `backend` is OneDnn and that applies; bf16_linear where use_bf16_linear; else at::linear.
at::Tensor project(const at::Tensor& x, const at::Tensor& weight, LinearBackend backend);

/// Named "Float8Linear" (torch::nn::Module::name()) with the Float8 backend, as torchao's module: the host's FSDP then
/// gathers its weight in float8 (sdk::BuildContext::float8), the weight being used by float8_linear only.
class Linear : public torch::nn::Module {
 public:
  Linear(int64_t in_features, int64_t out_features, LinearBackend backend)
      : torch::nn::Module(backend == LinearBackend::Float8 ? "Float8Linear" : "Linear"), backend_(backend) {
    weight_ = register_parameter("weight", at::empty({out_features, in_features}));
  }
  at::Tensor forward(const at::Tensor& x) const { return project(x, weight_, backend_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  LinearBackend backend_;
  at::Tensor weight_;
};

}  // namespace kforge::builtin::models
