// The fp16-rounding projection (see fp16_linear.h).
#include "fp16_linear.h"

#include <ATen/autocast_mode.h>
#include <kforge/sdk/error.h>

#include "linear.h"
#include "rounded_linear.h"

namespace kforge::builtin::models {
namespace {

/// `t` rounded to float16, as float32.
at::Tensor fp16(const at::Tensor& t) { return t.to(at::kHalf).to(at::kFloat); }

/// fp16(x_fp16 W_fp16^T), dx = fp16(dy_fp16 W_fp16), dW = fp16(dy_fp16^T x_fp16), summed in fp32.
struct Fp16Linear {
  static constexpr const char* kForward = "kforge::fp16_linear";
  static constexpr const char* kBackward = "kforge::fp16_linear_backward";
  static RoundedOperand input(const at::Tensor& rows) { return {rows.to(at::kHalf), {}}; }
  static RoundedOperand weight(const at::Tensor& w) { return input(w); }
  static RoundedOperand gradient(const at::Tensor& dy) { return {fp16(dy), {}}; }
  static at::Tensor output(const RoundedOperand& x, const RoundedOperand& w) {
    return fp16(at::mm(x.values.to(at::kFloat), w.values.to(at::kFloat).t()));
  }
  static at::Tensor input_gradient(const RoundedOperand& dy, const RoundedOperand& w) {
    return fp16(at::mm(dy.values, w.values.to(at::kFloat)));
  }
  static at::Tensor weight_gradient(const RoundedOperand& dy, const RoundedOperand& x) {
    return fp16(at::mm(dy.values.t(), x.values.to(at::kFloat)));
  }
};

}  // namespace

bool cpu_fp16_projections() {
  return at::autocast::is_enabled() && at::autocast::get_autocast_gpu_dtype() == at::kHalf &&
         !at::autocast::is_cpu_enabled();
}

bool fp16_linear_applies(const at::Tensor& x, const at::Tensor& weight) {
  return onednn_linear_applies(x, weight) && cpu_fp16_projections();  // the same operands, CPU autocast off
}

at::Tensor fp16_linear(const at::Tensor& x, const at::Tensor& weight) {
  if (!fp16_linear_applies(x, weight)) {
    throw sdk::Error(
        "linear: the fp16 projection needs float32 CPU x [..., in] and weight [out, in] in a [train] mixed_precision "
        "= \"fp16\" step on the CPU; check fp16_linear_applies first");
  }
  return RoundedLinear<Fp16Linear>::apply(x, weight);
}

}  // namespace kforge::builtin::models
