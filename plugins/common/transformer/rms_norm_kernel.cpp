// The fused RMSNorm op (see rms_norm_kernel.h).
#include "rms_norm_kernel.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace kforge::builtin::models {
namespace {

using namespace lanes;

/// One row of width n: y = x r w with r = 1 / sqrt(mean(x^2) + eps); returns r.
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline float forward_row(const Scalar* x, const float* w, Scalar* y, int64_t n, float eps) {
  Floats<kLanes> squares = splat<kLanes>(0.0f);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Floats<kLanes> v = load<kLanes>(x + j);
    squares += v * v;
  }
  if (j < n) {
    const Floats<kLanes> v = load_tail<kLanes>(x + j, n - j, 0.0f);
    squares += v * v;
  }
  const float r = 1.0f / std::sqrt(static_cast<float>(horizontal_sum<kLanes>(squares)) / static_cast<float>(n) + eps);
  for (j = 0; j + kLanes <= n; j += kLanes) store<kLanes>(load<kLanes>(x + j) * r * load<kLanes>(w + j), y + j);
  if (j < n) {
    store<kLanes>(load_tail<kLanes>(x + j, n - j, 0.0f) * r * load_tail<kLanes>(w + j, n - j, 0.0f), y + j, n - j);
  }
  return r;
}

/// The kLanes values at p[j..], zero-filled past n.
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline Floats<kLanes> load_row(const Scalar* p, int64_t j, int64_t n) {
  return j + kLanes <= n ? load<kLanes>(p + j) : load_tail<kLanes>(p + j, n - j, 0.0f);
}

/// One row's dx = r (w dy) - x r^3 / n * sum(w dy x), and dw += dy x r (into a float accumulator).
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void backward_row(const Scalar* x, const float* w, const Scalar* dy, float r, Scalar* dx,
                                                float* dw, int64_t n) {
  Floats<kLanes> dot = splat<kLanes>(0.0f);
  for (int64_t j = 0; j < n; j += kLanes)
    dot += load_row<kLanes>(w, j, n) * load_row<kLanes>(dy, j, n) * load_row<kLanes>(x, j, n);
  const float c = static_cast<float>(horizontal_sum<kLanes>(dot)) * r * r * r / static_cast<float>(n);
  for (int64_t j = 0; j < n; j += kLanes) {
    const int64_t count = std::min<int64_t>(kLanes, n - j);
    const Floats<kLanes> xv = load_row<kLanes>(x, j, n), g = load_row<kLanes>(dy, j, n);
    if (dx) store<kLanes>(load_row<kLanes>(w, j, n) * g * r - xv * c, dx + j, count);
    if (dw) store<kLanes>(load_row<kLanes>(dw, j, n) + g * xv * r, dw + j, count);
  }
}

template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void forward_rows(const Scalar* x, const float* w, Scalar* y, float* r, int64_t n,
                                                float eps, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) r[i] = forward_row<kLanes>(x + i * n, w, y + i * n, n, eps);
}

template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void backward_rows(const Scalar* x, const float* w, const Scalar* dy, const float* r,
                                                 Scalar* dx, float* dw, int64_t n, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    backward_row<kLanes>(x + i * n, w, dy + i * n, r[i], dx ? dx + i * n : nullptr, dw, n);
  }
}

WidthChoice& rms_norm_width_choice() {
  static WidthChoice width("rms_norm");
  return width;
}

/// Row blocks of the backward: each accumulates its own dw, summed in block order (deterministic).
constexpr int64_t kRowsPerBlock = 64;

class FusedRmsNorm : public torch::autograd::Function<FusedRmsNorm> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& weight,
                            double eps) {
    RECORD_FUNCTION("kforge::rms_norm", c10::ArrayRef<const c10::IValue>{});
    const at::Tensor x = x_in.contiguous(), w = weight.contiguous();
    const int64_t n = x.size(-1), rows = x.numel() / n;
    at::Tensor y = at::empty_like(x);
    at::Tensor r = at::empty({rows}, x.options().dtype(at::kFloat));
    const Width width = rms_norm_width_choice().get();
    const auto e = static_cast<float>(eps);
    dispatch_float_or_bfloat16(x.scalar_type(), "rms_norm", [&](auto scalar) {
      using Scalar = decltype(scalar);
      const Scalar* xp = x.data_ptr<Scalar>();
      Scalar* yp = y.data_ptr<Scalar>();
      const float* wp = w.data_ptr<float>();
      float* rp = r.data_ptr<float>();
      at::parallel_for(0, rows, std::max<int64_t>(1, at::internal::GRAIN_SIZE / n), [&](int64_t begin, int64_t end) {
        dispatch_width(width, [&](auto lanes) { forward_rows<lanes>(xp, wp, yp, rp, n, e, begin, end); });
      });
    });
    ctx->save_for_backward({x, w, r});
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::rms_norm_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &r = saved[2];
    const at::Tensor dy = grad_outputs[0].to(x.scalar_type()).contiguous();
    const int64_t n = x.size(-1), rows = x.numel() / n;
    const bool want_x = ctx->needs_input_grad(0), want_w = ctx->needs_input_grad(1);
    at::Tensor dx = want_x ? at::empty_like(x) : at::Tensor();
    const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    at::Tensor dw_blocks = want_w ? at::zeros({blocks, n}, w.options()) : at::Tensor();
    const Width width = rms_norm_width_choice().get();
    dispatch_float_or_bfloat16(x.scalar_type(), "rms_norm", [&](auto scalar) {
      using Scalar = decltype(scalar);
      const Scalar *xp = x.data_ptr<Scalar>(), *dyp = dy.data_ptr<Scalar>();
      Scalar* dxp = want_x ? dx.data_ptr<Scalar>() : nullptr;
      const float *wp = w.data_ptr<float>(), *rp = r.data_ptr<float>();
      at::parallel_for(0, blocks, 1, [&](int64_t first, int64_t last) {
        for (int64_t b = first; b < last; ++b) {
          const int64_t begin = b * kRowsPerBlock, end = std::min(rows, begin + kRowsPerBlock);
          float* dwp = want_w ? dw_blocks.data_ptr<float>() + b * n : nullptr;
          dispatch_width(width, [&](auto lanes) { backward_rows<lanes>(xp, wp, dyp, rp, dxp, dwp, n, begin, end); });
        }
      });
    });
    return {dx, want_w ? dw_blocks.sum(0) : at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool fused_rms_norm_applies(const at::Tensor& x, const at::Tensor& weight) {
  return x.device().is_cpu() && weight.device().is_cpu() && x.dim() >= 1 &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) && weight.scalar_type() == at::kFloat &&
         weight.dim() == 1 && weight.size(0) == x.size(-1) && x.size(-1) > 0;
}

at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (!fused_rms_norm_applies(x, weight)) {
    std::ostringstream message;
    message << "rms_norm: the fused kernel needs CPU float32/bfloat16 x [..., n] and a float32 weight [n], got x "
            << x.sizes() << " " << x.scalar_type() << " and weight " << weight.sizes() << " " << weight.scalar_type();
    throw sdk::Error(message.str());
  }
  return FusedRmsNorm::apply(x, weight, eps);
}

Width rms_norm_width() { return rms_norm_width_choice().get(); }

void set_rms_norm_width(Width width) { rms_norm_width_choice().set(width); }

}  // namespace kforge::builtin::models
