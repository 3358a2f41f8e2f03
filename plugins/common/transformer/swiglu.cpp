// The fused SwiGLU element-wise op (see swiglu.h).
#include "swiglu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace kforge::builtin::models {
namespace {

using namespace lanes;

template <int kLanes>
[[gnu::always_inline]] inline Floats<kLanes> sigmoid(Floats<kLanes> x) {
  return 1.0f / (1.0f + vector_exp<kLanes>(-x));
}

/// h = silu(g) u over [begin, end).
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void forward_span(const Scalar* g, const Scalar* u, Scalar* h, int64_t begin,
                                                int64_t end) {
  for (int64_t i = begin; i < end; i += kLanes) {
    const int64_t count = std::min<int64_t>(kLanes, end - i);
    const Floats<kLanes> gv = count == kLanes ? load<kLanes>(g + i) : load_tail<kLanes>(g + i, count, 0.0f);
    const Floats<kLanes> uv = count == kLanes ? load<kLanes>(u + i) : load_tail<kLanes>(u + i, count, 0.0f);
    store<kLanes>(gv * sigmoid<kLanes>(gv) * uv, h + i, count);
  }
}

/// dg = dh u silu'(g), silu'(g) = s (1 + g (1 - s)) with s = sigmoid(g); du = dh silu(g). A null
/// dg or du is not wanted.
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void backward_span(const Scalar* g, const Scalar* u, const Scalar* dh, Scalar* dg,
                                                 Scalar* du, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i += kLanes) {
    const int64_t count = std::min<int64_t>(kLanes, end - i);
    const bool full = count == kLanes;
    const Floats<kLanes> gv = full ? load<kLanes>(g + i) : load_tail<kLanes>(g + i, count, 0.0f);
    const Floats<kLanes> uv = full ? load<kLanes>(u + i) : load_tail<kLanes>(u + i, count, 0.0f);
    const Floats<kLanes> dv = full ? load<kLanes>(dh + i) : load_tail<kLanes>(dh + i, count, 0.0f);
    const Floats<kLanes> s = sigmoid<kLanes>(gv);
    if (dg) store<kLanes>(dv * uv * (s * (1.0f + gv * (1.0f - s))), dg + i, count);
    if (du) store<kLanes>(dv * gv * s, du + i, count);
  }
}

WidthChoice& swiglu_width_choice() {
  static WidthChoice width("swiglu");
  return width;
}

class SwiGlu : public torch::autograd::Function<SwiGlu> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& gate, const at::Tensor& up) {
    RECORD_FUNCTION("kforge::swiglu", c10::ArrayRef<const c10::IValue>{});
    const at::Tensor g = gate.contiguous(), u = up.contiguous();
    at::Tensor h = at::empty_like(g);
    const Width width = swiglu_width_choice().get();
    dispatch_float_or_bfloat16(g.scalar_type(), "swiglu", [&](auto scalar) {
      using Scalar = decltype(scalar);
      const Scalar *gp = g.data_ptr<Scalar>(), *up_ = u.data_ptr<Scalar>();
      Scalar* hp = h.data_ptr<Scalar>();
      at::parallel_for(0, g.numel(), at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
        dispatch_width(width, [&](auto lanes) { forward_span<lanes>(gp, up_, hp, begin, end); });
      });
    });
    ctx->save_for_backward({g, u});
    return h;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::swiglu_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &g = saved[0], &u = saved[1];
    const at::Tensor dh = grad_outputs[0].to(g.scalar_type()).contiguous();
    const bool want_g = ctx->needs_input_grad(0), want_u = ctx->needs_input_grad(1);
    at::Tensor dg = want_g ? at::empty_like(g) : at::Tensor();
    at::Tensor du = want_u ? at::empty_like(u) : at::Tensor();
    const Width width = swiglu_width_choice().get();
    dispatch_float_or_bfloat16(g.scalar_type(), "swiglu", [&](auto scalar) {
      using Scalar = decltype(scalar);
      const Scalar *gp = g.data_ptr<Scalar>(), *up_ = u.data_ptr<Scalar>(), *dhp = dh.data_ptr<Scalar>();
      Scalar* dgp = want_g ? dg.data_ptr<Scalar>() : nullptr;
      Scalar* dup = want_u ? du.data_ptr<Scalar>() : nullptr;
      at::parallel_for(0, g.numel(), at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
        dispatch_width(width, [&](auto lanes) { backward_span<lanes>(gp, up_, dhp, dgp, dup, begin, end); });
      });
    });
    return {dg, du};
  }
};

}  // namespace

at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up, bool fused) {
  if (gate.sizes() != up.sizes() || gate.scalar_type() != up.scalar_type() || gate.device() != up.device()) {
    std::ostringstream message;
    message << "swiglu: gate " << gate.sizes() << " " << gate.scalar_type() << " on " << gate.device() << " and up "
            << up.sizes() << " " << up.scalar_type() << " on " << up.device()
            << " must be tensors of one shape, dtype and device";
    throw sdk::Error(message.str());
  }
  // The fused kernel is the CPU's; another device takes the composite through its own LibTorch ops.
  if (!fused || !gate.device().is_cpu() || (gate.scalar_type() != at::kFloat && gate.scalar_type() != at::kBFloat16)) {
    return at::silu(gate) * up;
  }
  return SwiGlu::apply(gate, up);
}

Width swiglu_width() { return swiglu_width_choice().get(); }

void set_swiglu_width(Width width) { swiglu_width_choice().set(width); }

}  // namespace kforge::builtin::models
