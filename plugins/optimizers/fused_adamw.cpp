// Fused multi-tensor AdamW (see fused_adamw.h).
#include "fused_adamw.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cmath>

namespace kforge::builtin::optimizers {
namespace {

// torch.optim.AdamW's scalars for one tensor, rounded to its dtype as ATen passes them to its kernels.
template <typename T>
struct Coefficients {
  T decay, beta1, one_minus_beta1, beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size;

  Coefficients(const AdamWHyper& h, int64_t step) {
    const double steps = static_cast<double>(step);
    const double bias_correction1 = 1.0 - std::pow(h.beta1, steps);
    decay = static_cast<T>(1.0 - h.lr * h.weight_decay);
    beta1 = static_cast<T>(h.beta1);
    one_minus_beta1 = static_cast<T>(1.0 - h.beta1);
    beta2 = static_cast<T>(h.beta2);
    one_minus_beta2 = static_cast<T>(1.0 - h.beta2);
    bias_correction2_sqrt = static_cast<T>(std::sqrt(1.0 - std::pow(h.beta2, steps)));
    eps = static_cast<T>(h.eps);
    neg_step_size = static_cast<T>(-(h.lr / bias_correction1));
  }
};

// The update of elements [0, n): one expression per torch op (param.mul_, exp_avg.mul_.add_,
// exp_avg_sq.mul_.addcmul_, denom = sqrt / bc2_sqrt + eps, param.addcdiv_), with a fused
// multiply-add exactly where ATen's vectorised add (fmadd) and addcmul (contracted) kernels have one.
template <typename T>
__attribute__((always_inline)) inline void update_range(T* __restrict p, const T* __restrict g, T* __restrict m,
                                                        T* __restrict v, int64_t n, const Coefficients<T>& c) {
  for (int64_t i = 0; i < n; ++i) {
    const T grad = g[i];
    const T param = p[i] * c.decay;
    const T exp_avg = std::fma(grad, c.one_minus_beta1, m[i] * c.beta1);
    const T exp_avg_sq = std::fma(c.one_minus_beta2 * grad, grad, v[i] * c.beta2);
    const T denom = std::sqrt(exp_avg_sq) / c.bias_correction2_sqrt + c.eps;
    p[i] = param + c.neg_step_size * exp_avg / denom;
    m[i] = exp_avg;
    v[i] = exp_avg_sq;
  }
}

lanes::WidthChoice& fused_adamw_width_choice() {
  static lanes::WidthChoice width("fused_adamw");
  return width;
}

// The element loop compiled for the chosen width (auto-vectorised; the baseline calls fma per element). Every width
// gives the same result: each element's operations and their rounding are the same.
template <typename T>
void update_pointers(T* p, const T* g, T* m, T* v, int64_t n, const Coefficients<T>& c) {
  lanes::dispatch_width(fused_adamw_width_choice().get(), [&](auto) { update_range(p, g, m, v, n, c); });
}

void update(const FusedAdamWTensor& t, int64_t begin, int64_t end) {
  const int64_t n = end - begin;
  if (t.param.scalar_type() == at::kFloat) {
    update_pointers(t.param.data_ptr<float>() + begin, t.grad.data_ptr<float>() + begin,
                    t.exp_avg.data_ptr<float>() + begin, t.exp_avg_sq.data_ptr<float>() + begin, n,
                    Coefficients<float>(t.hyper, t.step));
  } else {
    update_pointers(t.param.data_ptr<double>() + begin, t.grad.data_ptr<double>() + begin,
                    t.exp_avg.data_ptr<double>() + begin, t.exp_avg_sq.data_ptr<double>() + begin, n,
                    Coefficients<double>(t.hyper, t.step));
  }
}

struct Chunk {
  size_t tensor;
  int64_t begin, end;
};

constexpr int64_t kChunk = 1 << 15;  ///< elements per parallel work item

}  // namespace

lanes::Width fused_adamw_width() { return fused_adamw_width_choice().get(); }
void set_fused_adamw_width(lanes::Width width) { fused_adamw_width_choice().set(width); }

bool fused_adamw_supports(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg) {
  const at::ScalarType dtype = param.scalar_type();
  return (dtype == at::kFloat || dtype == at::kDouble) && param.device().is_cpu() && !grad.is_sparse() &&
         grad.scalar_type() == dtype && exp_avg.scalar_type() == dtype && grad.device().is_cpu() &&
         param.is_contiguous() && grad.is_contiguous() && exp_avg.is_contiguous();
}

void fused_adamw_update(const std::vector<FusedAdamWTensor>& tensors) {
  RECORD_FUNCTION("kforge::fused_adamw", c10::ArrayRef<const c10::IValue>{});
  // Large tensors are split so the threads share them; small ones (norms, biases) are one item each.
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int64_t n = tensors[i].param.numel();
    for (int64_t b = 0; b < n; b += kChunk) chunks.push_back({i, b, std::min(n, b + kChunk)});
  }
  at::parallel_for(0, static_cast<int64_t>(chunks.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) update(tensors[chunks[c].tensor], chunks[c].begin, chunks[c].end);
  });
  // Written through raw pointers: record the in-place change as ATen's in-place ops would.
  for (const FusedAdamWTensor& t : tensors) {
    for (const at::Tensor* written : {&t.param, &t.exp_avg, &t.exp_avg_sq})
      torch::autograd::impl::bump_version(*written);
  }
}

}  // namespace kforge::builtin::optimizers
