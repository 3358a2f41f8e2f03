// Fused token cross-entropy (see fused_cross_entropy.h).
#include "fused_cross_entropy.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>
#include <vector>

#include "kforge/sdk/error.h"
#include "kforge/sdk/loss.h"

namespace kforge::builtin::losses {
namespace {

using namespace lanes;

constexpr int64_t kBlockVectors = 64;  ///< float partial sums per row are folded into double this often

/// A row's logsumexp as max + log_sum; keeping the two apart lets (x - max) - log_sum round as ATen's
/// log_softmax does, which keeps softmax(x) = exp of it accurate to float even where lse is large.
template <typename Acc>
struct RowNormaliser {
  Acc max;
  Acc log_sum;
};

static_assert(sizeof(RowNormaliser<float>) == 2 * sizeof(float) && sizeof(RowNormaliser<double>) == 2 * sizeof(double),
              "a [tokens, 2] tensor holds the normalisers");

/// The sum of exp(x - max) is taken in float blocks folded into double; x is float or bfloat16.
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline RowNormaliser<float> row_normaliser_lanes(const Scalar* x, int64_t n) {
  const int64_t full = n - n % kLanes;
  Floats<kLanes> m = splat<kLanes>(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < full; j += kLanes) {
    const Floats<kLanes> v = load<kLanes>(x + j);
    m = v > m ? v : m;
  }
  float max = horizontal_max<kLanes>(m);
  for (int64_t j = full; j < n; ++j) max = std::max(max, static_cast<float>(x[j]));
  if (std::isinf(max)) return {max, 0.0f};  // all -inf or some +inf: the loss is not finite, as in ATen
  const Floats<kLanes> shift = splat<kLanes>(max);
  double sum = 0;
  for (int64_t block = 0; block < full; block += kLanes * kBlockVectors) {
    const int64_t end = std::min(full, block + kLanes * kBlockVectors);
    Floats<kLanes> partial = splat<kLanes>(0.0f);
    for (int64_t j = block; j < end; j += kLanes) partial += vector_exp<kLanes>(load<kLanes>(x + j) - shift);
    sum += horizontal_sum<kLanes>(partial);
  }
  if (full < n) {
    sum += horizontal_sum<kLanes>(vector_exp<kLanes>(load_tail<kLanes, Scalar>(x + full, n - full) - shift));
  }
  return {max, static_cast<float>(std::log(sum))};
}

RowNormaliser<double> row_normaliser(const double* x, int64_t n) {
  const double max = *std::max_element(x, x + n);
  if (std::isinf(max)) return {max, 0.0};
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[j] - max);
  return {max, std::log(sum)};
}

/// out = (softmax(x) - onehot(label)) * scale, softmax(x) = exp((x - max) - log_sum), computed in
/// float; x and out are both float or both bfloat16 (each entry rounded once).
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void write_row_grad_lanes(const Scalar* x, RowNormaliser<float> norm, int64_t label,
                                                        float scale, Scalar* out, int64_t n) {
  const int64_t full = n - n % kLanes;
  const Floats<kLanes> max = splat<kLanes>(norm.max);
  const Floats<kLanes> log_sum = splat<kLanes>(norm.log_sum);
  for (int64_t j = 0; j < full; j += kLanes) {
    store<kLanes>(vector_exp<kLanes>((load<kLanes>(x + j) - max) - log_sum) * scale, out + j);
  }
  if (full < n) {
    const Floats<kLanes> tail = load_tail<kLanes, Scalar>(x + full, n - full);
    store<kLanes>(vector_exp<kLanes>((tail - max) - log_sum) * scale, out + full, n - full);
  }
  const Floats<kLanes> label_logit = splat<kLanes>(static_cast<float>(x[label]));
  out[label] = static_cast<Scalar>((vector_exp<kLanes>((label_logit - max) - log_sum) * scale)[0] - scale);
}

/// The widest kernels this CPU runs, unless a test chose narrower ones.
WidthChoice& cross_entropy_width_choice() {
  static WidthChoice width("cross_entropy");
  return width;
}

/// A float or bfloat16 row's normaliser (in float): max, then the sum of exp(x - max).
template <typename Scalar>
RowNormaliser<float> row_normaliser(const Scalar* x, int64_t n) {
  return dispatch_width(cross_entropy_width_choice().get(),
                        [&](auto lanes) { return row_normaliser_lanes<lanes>(x, n); });
}

/// out = (softmax(x) - onehot(label)) * scale for a float or bfloat16 row.
template <typename Scalar>
void write_row_grad(const Scalar* x, RowNormaliser<float> norm, int64_t label, float scale, Scalar* out, int64_t n) {
  dispatch_width(cross_entropy_width_choice().get(),
                 [&](auto lanes) { write_row_grad_lanes<lanes>(x, norm, label, scale, out, n); });
}

void write_row_grad(const double* x, RowNormaliser<double> norm, int64_t label, double scale, double* out,
                    int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = std::exp((x[j] - norm.max) - norm.log_sum) * scale;
  out[label] -= scale;
}

/// Rows per parallel_for task: about at::internal::GRAIN_SIZE elements.
int64_t grain_rows(int64_t vocab) { return std::max<int64_t>(1, at::internal::GRAIN_SIZE / vocab); }

void check_labels(const int64_t* labels, int64_t tokens, int64_t vocab) {
  for (int64_t i = 0; i < tokens; ++i) {
    if (labels[i] == sdk::kIgnoreIndex || (labels[i] >= 0 && labels[i] < vocab)) continue;
    std::ostringstream message;
    message << "cross_entropy: label " << labels[i] << " of token " << i << " is outside [0, " << vocab
            << ") and is not the ignore index " << sdk::kIgnoreIndex
            << "; check that the model's vocab size covers the tokenizer's";
    throw sdk::Error(message.str());
  }
}

/// Each row's normaliser into `norms` ({0, 0} for ignored rows); returns the summed loss in double.
template <typename Scalar, typename Acc>
double forward_rows(const Scalar* logits, const int64_t* labels, int64_t tokens, int64_t vocab,
                    RowNormaliser<Acc>* norms) {
  std::vector<double> losses(tokens, 0.0);
  at::parallel_for(0, tokens, grain_rows(vocab), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      norms[i] = {0, 0};
      if (labels[i] == sdk::kIgnoreIndex) continue;
      const Scalar* row = logits + i * vocab;
      norms[i] = row_normaliser(row, vocab);
      losses[i] = static_cast<double>(norms[i].log_sum - (static_cast<Acc>(row[labels[i]]) - norms[i].max));
    }
  });
  double sum = 0;
  for (double loss : losses) sum += loss;
  return sum;
}

template <typename Scalar, typename Acc>
void backward_rows(const Scalar* logits, const int64_t* labels, const RowNormaliser<Acc>* norms, Acc scale, int64_t tokens,
                   int64_t vocab, Scalar* grad) {
  at::parallel_for(0, tokens, grain_rows(vocab), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Scalar* out = grad + i * vocab;
      if (labels[i] == sdk::kIgnoreIndex) {
        std::fill(out, out + vocab, Scalar(0));
        continue;
      }
      write_row_grad(logits + i * vocab, norms[i], labels[i], scale, out, vocab);
    }
  });
}

/// Calls `body(Scalar{}, Acc{})` for the logits' dtype: float/bfloat16 accumulate in float, double in double.
template <typename Body>
void dispatch(at::ScalarType dtype, const Body& body) {
  switch (dtype) {
    case at::kFloat:
      return body(float{}, float{});
    case at::kDouble:
      return body(double{}, double{});
    case at::kBFloat16:
      return body(c10::BFloat16{}, float{});
    default:
      throw sdk::Error(std::string("cross_entropy: fused kernel got ") + c10::toString(dtype) +
                       " logits; only float32, float64 and bfloat16 are supported");
  }
}

at::ScalarType accumulate_type(at::ScalarType dtype) { return at::promote_types(dtype, at::kFloat); }

class FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& labels) {
    const int64_t tokens = logits.size(0);
    const int64_t vocab = logits.size(1);
    const at::Tensor flat_labels = labels.to(at::kLong).contiguous();
    check_labels(flat_labels.data_ptr<int64_t>(), tokens, vocab);
    const at::ScalarType acc = accumulate_type(logits.scalar_type());
    at::Tensor norms = at::empty({tokens, 2}, logits.options().dtype(acc));  // RowNormaliser<Acc> per row
    double sum = 0;
    dispatch(logits.scalar_type(), [&](auto scalar, auto acc_scalar) {
      using Scalar = decltype(scalar);
      using Acc = decltype(acc_scalar);
      sum = forward_rows(logits.data_ptr<Scalar>(), flat_labels.data_ptr<int64_t>(), tokens, vocab,
                         reinterpret_cast<RowNormaliser<Acc>*>(norms.data_ptr<Acc>()));
    });
    ctx->save_for_backward({logits, norms, flat_labels});
    return at::scalar_tensor(sum, logits.options().dtype(acc));
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& logits = saved[0];
    const at::Tensor& norms = saved[1];
    const at::Tensor& labels = saved[2];
    const double scale = grad_outputs[0].item<double>();
    at::Tensor grad = at::empty_like(logits, at::MemoryFormat::Contiguous);
    dispatch(logits.scalar_type(), [&](auto scalar, auto acc_scalar) {
      using Scalar = decltype(scalar);
      using Acc = decltype(acc_scalar);
      backward_rows(logits.data_ptr<Scalar>(), labels.data_ptr<int64_t>(),
                    reinterpret_cast<const RowNormaliser<Acc>*>(norms.data_ptr<Acc>()),
                    static_cast<Acc>(scale), logits.size(0), logits.size(1), grad.data_ptr<Scalar>());
    });
    return {grad, at::Tensor()};
  }
};

}  // namespace

Width row_kernel_width() { return cross_entropy_width_choice().get(); }

void set_row_kernel_width(Width width) { cross_entropy_width_choice().set(width); }

bool fused_cross_entropy_supports(const at::Tensor& logits) {
  const at::ScalarType dtype = logits.scalar_type();
  return logits.device().is_cpu() && logits.layout() == at::kStrided && logits.dim() == 2 &&
         logits.size(1) > 0 && logits.is_contiguous() &&
         (dtype == at::kFloat || dtype == at::kDouble || dtype == at::kBFloat16);
}

at::Tensor fused_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& labels) {
  if (!fused_cross_entropy_supports(logits)) {
    std::ostringstream message;
    message << "cross_entropy: the fused kernel needs contiguous CPU float32/float64/bfloat16 logits "
            << "[tokens, vocab], got " << logits.scalar_type() << " " << logits.sizes() << " on " << logits.device()
            << "; check fused_cross_entropy_supports first";
    throw sdk::Error(message.str());
  }
  return FusedCrossEntropy::apply(logits, labels);
}

}  // namespace kforge::builtin::losses
