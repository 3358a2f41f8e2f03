// Float8Linear's forward and backward on float8-rounded operands (see float8_linear.h).
#include "float8_linear.h"

#include <kforge/sdk/error.h>

#include <optional>

#include "float8_cast.h"
#include "hardware_scaled_mm.h"
#include "rounded_linear.h"

namespace kforge::builtin::models {
namespace {

/// torchao's hp_tensor_to_float8_dynamic on a bf16 tensor: amax over the whole tensor, scale = max / max(amax, 1e-12)
/// in float64 rounded to float32, values = to_fp8_saturated(float32(t) * scale), held with the reciprocal scale.
RoundedOperand to_float8(const at::Tensor& t, Float8Format format) {
  const at::Tensor high = t.to(at::kBFloat16).to(at::kFloat);
  const at::Tensor amax = high.abs().max().to(at::kDouble);
  const at::Tensor scale = (float8_max(format) / amax.clamp_min(1e-12)).to(at::kFloat);
  return {round_to_float8(high * scale, format), scale.reciprocal()};
}

/// torch._scaled_mm(a, b, scale_a, scale_b, out_dtype = bfloat16) for a = op(x.values) in format fx, b = op(y.values)
/// in fy (a transpose or not): the GPU's float8 GEMM where hardware_scaled_mm applies, else the product of the same
/// values summed in fp32, times the reciprocal scales' product, rounded to bf16.
at::Tensor scaled_mm(const at::Tensor& a, const RoundedOperand& x, Float8Format fx, const at::Tensor& b,
                     const RoundedOperand& y, Float8Format fy, bool fast_accumulation) {
  const std::optional<at::Tensor> hardware =
      hardware_scaled_mm(a, b, fx, fy, x.inverse_scale, y.inverse_scale, fast_accumulation);
  if (hardware) return *hardware;
  return (at::mm(a, b) * (x.inverse_scale * y.inverse_scale)).to(at::kBFloat16);
}

/// x and W in e4m3, dy in e5m2; torchao's Float8GemmConfig: fast accumulation for the output's product only.
struct Float8Linear {
  static constexpr const char* kForward = "kforge::float8_linear";
  static constexpr const char* kBackward = "kforge::float8_linear_backward";
  static RoundedOperand input(const at::Tensor& rows) { return to_float8(rows, Float8Format::E4M3); }
  static RoundedOperand weight(const at::Tensor& w) { return input(w); }
  static RoundedOperand gradient(const at::Tensor& dy) { return to_float8(dy, Float8Format::E5M2); }
  static at::Tensor output(const RoundedOperand& x, const RoundedOperand& w) {
    return scaled_mm(x.values, x, Float8Format::E4M3, w.values.t(), w, Float8Format::E4M3, true);
  }
  static at::Tensor input_gradient(const RoundedOperand& dy, const RoundedOperand& w) {
    return scaled_mm(dy.values, dy, Float8Format::E5M2, w.values, w, Float8Format::E4M3, false);
  }
  static at::Tensor weight_gradient(const RoundedOperand& dy, const RoundedOperand& x) {
    return scaled_mm(dy.values.t(), dy, Float8Format::E5M2, x.values, x, Float8Format::E4M3, false);
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
  return RoundedLinear<Float8Linear>::apply(x, weight);
}

}  // namespace kforge::builtin::models
