// Float8Linear's forward and backward on float8-rounded operands (see float8_linear.h).
#include "float8_linear.h"

#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <vector>

#include "float8_cast.h"
#include "hardware_scaled_mm.h"

namespace kforge::builtin::models {
namespace {

/// A float8 tensor as torchao holds it: the float8 values (here in float32) and the reciprocal of their scale.
struct Float8Operand {
  at::Tensor values;
  at::Tensor inverse_scale;  ///< 0-dim float32
  Float8Format format;
};

/// torchao's hp_tensor_to_float8_dynamic on a bf16 tensor: amax over the whole tensor, scale = max / max(amax, 1e-12)
/// in float64 rounded to float32, values = to_fp8_saturated(float32(t) * scale).
Float8Operand to_float8(const at::Tensor& t, Float8Format format) {
  const at::Tensor high = t.to(at::kBFloat16).to(at::kFloat);
  const at::Tensor amax = high.abs().max().to(at::kDouble);
  const at::Tensor scale = (float8_max(format) / amax.clamp_min(1e-12)).to(at::kFloat);
  return {round_to_float8(high * scale, format), scale.reciprocal(), format};
}

/// torch._scaled_mm(a, b, scale_a, scale_b, out_dtype = bfloat16) for a = op(x.values), b = op(y.values) (a
/// transpose or not): the GPU's float8 GEMM where hardware_scaled_mm applies, else the product of the same values
/// summed in fp32, times the reciprocal scales' product, rounded to bf16.
at::Tensor scaled_mm(const at::Tensor& a, const Float8Operand& x, const at::Tensor& b, const Float8Operand& y,
                     bool fast_accumulation) {
  const std::optional<at::Tensor> hardware =
      hardware_scaled_mm(a, b, x.format, y.format, x.inverse_scale, y.inverse_scale, fast_accumulation);
  if (hardware) return *hardware;
  return (at::mm(a, b) * (x.inverse_scale * y.inverse_scale)).to(at::kBFloat16);
}

class Float8LinearFunction : public torch::autograd::Function<Float8LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight) {
    RECORD_FUNCTION("kforge::float8_linear", c10::ArrayRef<const c10::IValue>{});
    // The fp32 arithmetic below must not be autocast to bf16.
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const Float8Operand rows = to_float8(x.reshape({-1, x.size(-1)}), Float8Format::E4M3);
    const Float8Operand w = to_float8(weight, Float8Format::E4M3);
    // torchao's Float8GemmConfig: fast accumulation for the output's product only.
    const at::Tensor y = scaled_mm(rows.values, rows, w.values.t(), w, /*fast_accumulation=*/true);
    ctx->save_for_backward({rows.values, rows.inverse_scale, w.values, w.inverse_scale});
    ctx->saved_data["input_sizes"] = x.sizes().vec();
    ctx->saved_data["input_dtype"] = x.scalar_type();
    ctx->saved_data["weight_dtype"] = weight.scalar_type();
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = weight.size(0);
    return y.view(shape);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::float8_linear_backward", c10::ArrayRef<const c10::IValue>{});
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const auto saved = ctx->get_saved_variables();
    const Float8Operand rows{saved[0], saved[1], Float8Format::E4M3}, w{saved[2], saved[3], Float8Format::E4M3};
    const Float8Operand dy =
        to_float8(grad_outputs[0].reshape({rows.values.size(0), w.values.size(0)}), Float8Format::E5M2);
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0)) {
      dx = scaled_mm(dy.values, dy, w.values, w, /*fast_accumulation=*/false)
               .to(ctx->saved_data["input_dtype"].toScalarType())
               .view(ctx->saved_data["input_sizes"].toIntVector());
    }
    if (ctx->needs_input_grad(1)) {
      dw = scaled_mm(dy.values.t(), dy, rows.values, rows, /*fast_accumulation=*/false)
               .to(ctx->saved_data["weight_dtype"].toScalarType());
    }
    return {dx, dw};
  }
};

}  // namespace

bool float8_linear_applies(const at::Tensor& x, const at::Tensor& weight) {
  const auto floating = [](const at::Tensor& t) {
    return (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16) && t.layout() == at::kStrided;
  };
  return floating(x) && floating(weight) && x.device() == weight.device() && weight.dim() == 2 && x.dim() >= 1 &&
         x.size(-1) == weight.size(1);
}

at::Tensor float8_linear(const at::Tensor& x, const at::Tensor& weight) {
  if (!float8_linear_applies(x, weight)) {
    throw sdk::Error(
        "linear: the float8 projection needs float32 or bfloat16 x [..., in] and weight [out, in] on one device; "
        "check float8_linear_applies first");
  }
  return Float8LinearFunction::apply(x, weight);
}

}  // namespace kforge::builtin::models
