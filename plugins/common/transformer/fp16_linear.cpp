// The fp16-rounding projection (see fp16_linear.h).
#include "fp16_linear.h"

#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "linear.h"

namespace kforge::builtin::models {
namespace {

/// `t` rounded to float16, as float32.
at::Tensor fp16(const at::Tensor& t) { return t.to(at::kHalf).to(at::kFloat); }

class Fp16Linear : public torch::autograd::Function<Fp16Linear> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight) {
    RECORD_FUNCTION("kforge::fp16_linear", c10::ArrayRef<const c10::IValue>{});
    const at::Tensor rows = x.reshape({-1, x.size(-1)}).to(at::kHalf);
    const at::Tensor w = weight.to(at::kHalf);
    ctx->save_for_backward({rows, w});
    ctx->saved_data["input_sizes"] = x.sizes().vec();
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = w.size(0);
    return fp16(at::mm(rows.to(at::kFloat), w.to(at::kFloat).t())).view(shape);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::fp16_linear_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor rows = saved[0].to(at::kFloat);
    const at::Tensor w = saved[1].to(at::kFloat);
    const at::Tensor dy = fp16(grad_outputs[0].reshape({rows.size(0), w.size(0)}));
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0)) dx = fp16(at::mm(dy, w)).view(ctx->saved_data["input_sizes"].toIntVector());
    if (ctx->needs_input_grad(1)) dw = fp16(at::mm(dy.t(), rows));
    return {dx, dw};
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
  return Fp16Linear::apply(x, weight);
}

}  // namespace kforge::builtin::models
