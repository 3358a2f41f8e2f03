// RoundedLinear: the autograd function of a projection y = x W^T computed on rounded operands (bf16, fp16, float8),
// shared by the precisions' recipes, which say how each operand is rounded and each product is taken.
#pragma once

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include <string>
#include <vector>

namespace kforge::builtin::models {

/// An operand as a recipe rounds it: its values, and for a scaled format the reciprocal of its scale (0-dim float32;
/// undefined for an unscaled one).
struct RoundedOperand {
  at::Tensor values;
  at::Tensor inverse_scale;
};

/// y = x W^T for x [..., in] and W [out, in] on operands rounded by `Recipe`, which provides (all static):
///   kForward, kBackward                  the profiler's names of the two passes
///   input(rows), weight(w), gradient(dy)  the rounded operands of x's rows [m, in], W and dy [m, out]
///   output(x, w)                          y [m, out]
///   input_gradient(dy, w)                 dx [m, in], before it takes x's dtype
///   weight_gradient(dy, x)                dW [out, in], before it takes W's dtype
/// The rounded x and W are saved for the backward; each gradient only when it is needed. The arithmetic runs outside
/// autocast (a recipe says its own dtypes).
template <class Recipe>
class RoundedLinear : public torch::autograd::Function<RoundedLinear<Recipe>> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight) {
    RECORD_FUNCTION(Recipe::kForward, c10::ArrayRef<const c10::IValue>{});
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const RoundedOperand rows = Recipe::input(x.reshape({-1, x.size(-1)}));
    const RoundedOperand w = Recipe::weight(weight);
    const at::Tensor y = Recipe::output(rows, w);
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
    RECORD_FUNCTION(Recipe::kBackward, c10::ArrayRef<const c10::IValue>{});
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const auto saved = ctx->get_saved_variables();
    const RoundedOperand rows{saved[0], saved[1]}, w{saved[2], saved[3]};
    const RoundedOperand dy = Recipe::gradient(grad_outputs[0].reshape({rows.values.size(0), w.values.size(0)}));
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0)) {
      dx = Recipe::input_gradient(dy, w)
               .to(ctx->saved_data["input_dtype"].toScalarType())
               .view(ctx->saved_data["input_sizes"].toIntVector());
    }
    if (ctx->needs_input_grad(1)) {
      dw = Recipe::weight_gradient(dy, rows).to(ctx->saved_data["weight_dtype"].toScalarType());
    }
    return {dx, dw};
  }
};

}  // namespace kforge::builtin::models
