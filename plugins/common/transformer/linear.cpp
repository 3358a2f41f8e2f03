// The projection backends (see linear.h).
#include "linear.h"

#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "blas_gemm.h"
#include "fp16_linear.h"
#include "float8_linear.h"
#include "rounded_linear.h"
#include "vector_lanes.h"
#include "weight_gradient_gemm.h"

namespace kforge::builtin::models {
namespace {

/// C [m, n] = op(A) op(B) through dnnl_sgemm into a new tensor; zeros when the inner size k is 0.
at::Tensor product(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const at::Tensor& a,
                   const at::Tensor& b) {
  if (m == 0 || n == 0 || k == 0) return at::zeros({m, n}, a.options());
  at::Tensor c = at::empty({m, n}, a.options());
  onednn_gemm_rowmajor(trans_a, trans_b, m, n, k, 1.0f, a.data_ptr<float>(), a.size(1), b.data_ptr<float>(), b.size(1),
                       0.0f, c.data_ptr<float>(), n);
  return c;
}

/// dW [n, k] = dy^T x for dy [m, n] and x [m, k], contiguous float32, through the library weight_gradient_gemm.h picks.
at::Tensor weight_product(const at::Tensor& dy, const at::Tensor& x) {
  const int64_t m = dy.size(0), n = dy.size(1), k = x.size(1);
  if (m == 0 || n == 0 || k == 0) return at::zeros({n, k}, dy.options());
  at::Tensor dw = at::empty({n, k}, dy.options());
  weight_gradient(n, k, m, dy.data_ptr<float>(), x.data_ptr<float>(), dw.data_ptr<float>());
  return dw;
}

/// y [M, N] = x [M, K] W^T for W [N, K]; backward dx = dy W and dW = dy^T x.
class OneDnnLinear : public torch::autograd::Function<OneDnnLinear> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight) {
    RECORD_FUNCTION("kforge::onednn_linear", c10::ArrayRef<const c10::IValue>{});
    const at::Tensor rows = x.reshape({-1, x.size(-1)}).contiguous();
    const at::Tensor w = weight.contiguous();
    const at::Tensor y = product(false, true, rows.size(0), w.size(0), rows.size(1), rows, w);
    ctx->save_for_backward({rows, weight});
    ctx->saved_data["input_sizes"] = x.sizes().vec();
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = w.size(0);
    return y.view(shape);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::onednn_linear_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& rows = saved[0];
    const at::Tensor w = saved[1].contiguous();
    const int64_t m = rows.size(0), k = rows.size(1), n = w.size(0);
    const at::Tensor dy = grad_outputs[0].reshape({m, n}).contiguous();
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0))
      dx = product(false, false, m, k, n, dy, w).view(ctx->saved_data["input_sizes"].toIntVector());
    if (ctx->needs_input_grad(1)) dw = weight_product(dy, rows);
    return {dx, dw};
  }
};

/// Under bf16 autocast: y = bf16(x_bf16 W_bf16^T) in fp32 arithmetic; dx = bf16(dy W_bf16); dW = dy^T x_bf16 (fp32).
struct Bf16Linear {
  static constexpr const char* kForward = "kforge::bf16_linear";
  static constexpr const char* kBackward = "kforge::bf16_linear_backward";
  static RoundedOperand input(const at::Tensor& rows) { return {rows.to(at::kBFloat16).contiguous(), {}}; }
  static RoundedOperand weight(const at::Tensor& w) { return input(w); }
  static RoundedOperand gradient(const at::Tensor& dy) { return {dy.to(at::kFloat).contiguous(), {}}; }
  static at::Tensor output(const RoundedOperand& x, const RoundedOperand& w) {
    const at::Tensor& a = x.values;
    return product(false, true, a.size(0), w.values.size(0), a.size(1), a.to(at::kFloat), w.values.to(at::kFloat))
        .to(at::kBFloat16);
  }
  static at::Tensor input_gradient(const RoundedOperand& dy, const RoundedOperand& w) {
    const at::Tensor& g = dy.values;
    return product(false, false, g.size(0), w.values.size(1), g.size(1), g, w.values.to(at::kFloat)).to(at::kBFloat16);
  }
  static at::Tensor weight_gradient(const RoundedOperand& dy, const RoundedOperand& x) {
    return weight_product(dy.values, x.values.to(at::kFloat));
  }
};

}  // namespace

LinearBackend resolve_linear_backend(const std::string& setting) {
  if (setting == "aten") return LinearBackend::Aten;
  if (setting == "auto") return onednn_gemm_available() ? LinearBackend::OneDnn : LinearBackend::Aten;
  if (setting == "onednn") {
    if (onednn_gemm_available()) return LinearBackend::OneDnn;
    throw sdk::ConfigError(
        "[model] linear_backend = \"onednn\": this process has no oneDNN (no dnnl_sgemm in LibTorch's libraries); "
        "use \"auto\" or \"aten\"");
  }
  throw sdk::ConfigError("[model] linear_backend = \"" + setting + "\": must be \"auto\", \"onednn\" or \"aten\"");
}

LinearBackend dense_linear_backend(const std::string& setting, bool float8) {
  return float8 ? LinearBackend::Float8 : resolve_linear_backend(setting);
}

bool onednn_linear_applies(const at::Tensor& x, const at::Tensor& weight) {
  const auto fp32_cpu = [](const at::Tensor& t) {
    return t.scalar_type() == at::kFloat && t.device().is_cpu() && t.layout() == at::kStrided;
  };
  return fp32_cpu(x) && fp32_cpu(weight) && weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1) &&
         !at::autocast::is_cpu_enabled();
}

at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight) {
  if (!onednn_linear_applies(x, weight)) {
    throw sdk::Error(
        "linear: the oneDNN projection needs float32 CPU tensors x [..., in] and weight [out, in] "
        "outside autocast; check onednn_linear_applies first");
  }
  return OneDnnLinear::apply(x, weight);
}

bool bf16_linear_applies(const at::Tensor& x, const at::Tensor& weight) {
  return (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) && x.device().is_cpu() &&
         x.layout() == at::kStrided && weight.scalar_type() == at::kFloat && weight.device().is_cpu() &&
         weight.layout() == at::kStrided && weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1) &&
         at::autocast::is_cpu_enabled() && at::autocast::get_autocast_cpu_dtype() == at::kBFloat16;
}

at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight) {
  if (!bf16_linear_applies(x, weight)) {
    throw sdk::Error(
        "linear: the bf16 projection needs float32 or bfloat16 CPU x [..., in] and a float32 weight [out, in] under "
        "bf16 CPU autocast; check bf16_linear_applies first");
  }
  return RoundedLinear<Bf16Linear>::apply(x, weight);
}

bool cpu_has_bf16_instructions() {
  static const bool has = __builtin_cpu_supports("avx512bf16") && lanes::capability_cap() == lanes::Width::Avx512;
  return has;
}

bool use_bf16_linear(const at::Tensor& x, const at::Tensor& weight, LinearBackend backend) {
  return backend == LinearBackend::OneDnn && !cpu_has_bf16_instructions() && bf16_linear_applies(x, weight);
}

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, LinearBackend backend) {
  if (backend == LinearBackend::Float8) return float8_linear(x, weight);
  if (fp16_linear_applies(x, weight)) return fp16_linear(x, weight);
  if (backend == LinearBackend::OneDnn && onednn_linear_applies(x, weight)) return onednn_linear(x, weight);
  if (use_bf16_linear(x, weight, backend)) return bf16_linear(x, weight);
  return at::linear(x, weight);
}

}  // namespace kforge::builtin::models
