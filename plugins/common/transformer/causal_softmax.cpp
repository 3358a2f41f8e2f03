// The fused causal softmax (see causal_softmax.h).
#include "causal_softmax.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace kforge::builtin::models {
namespace {

using namespace lanes;

/// The rows [begin, end) of a [rows, keys] view and their visible keys, first(row) .. visible(row) - 1.
struct Rows {
  int64_t keys;
  int64_t seq;  ///< queries per group of rows; row r sees keys - seq + r % seq + 1 keys
  const int64_t* first_keys = nullptr;  ///< packed documents: [B, seq], each query's first key; null: key 0
  int64_t rows_per_batch = 1;
  int64_t visible(int64_t row) const { return keys - seq + row % seq + 1; }
  int64_t first(int64_t row) const { return first_keys ? first_keys[row / rows_per_batch * seq + row % seq] : 0; }
};

/// out[j] = exp(scale x[j] - m) / sum over the visible prefix, 0 beyond; scratch holds keys floats.
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void forward_row(const Scalar* x, Scalar* out, float* scratch, int64_t visible,
                                               int64_t keys, float scale) {
  const int64_t full = visible - visible % kLanes;
  Floats<kLanes> m = splat<kLanes>(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < full; j += kLanes) {
    const Floats<kLanes> v = load<kLanes>(x + j) * scale;
    m = v > m ? v : m;
  }
  float max = horizontal_max<kLanes>(m);
  for (int64_t j = full; j < visible; ++j) max = std::max(max, static_cast<float>(x[j]) * scale);
  const Floats<kLanes> shift = splat<kLanes>(max);
  Floats<kLanes> partial = splat<kLanes>(0.0f);
  for (int64_t j = 0; j < full; j += kLanes) {
    const Floats<kLanes> e = vector_exp<kLanes>(load<kLanes>(x + j) * scale - shift);
    store<kLanes>(e, scratch + j);
    partial += e;
  }
  if (full < visible) {
    const Floats<kLanes> e = vector_exp<kLanes>(load_tail<kLanes>(x + full, visible - full) * scale - shift);
    store<kLanes>(e, scratch + full, visible - full);
    partial += e;
  }
  const float inverse = static_cast<float>(1.0 / horizontal_sum<kLanes>(partial));
  for (int64_t j = 0; j < full; j += kLanes) store<kLanes>(load<kLanes>(scratch + j) * inverse, out + j);
  if (full < visible) {
    store<kLanes>(load_tail<kLanes>(scratch + full, visible - full, 0.0f) * inverse, out + full, visible - full);
  }
  std::fill(out + visible, out + keys, Scalar(0));
}

/// dx[j] = scale p[j] (g[j] - sum_k p[k] g[k]) over the visible prefix, 0 beyond.
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void backward_row(const Scalar* p, const Scalar* g, Scalar* dx, int64_t visible,
                                                int64_t keys, float scale) {
  const int64_t full = visible - visible % kLanes;
  Floats<kLanes> dot = splat<kLanes>(0.0f);
  for (int64_t j = 0; j < full; j += kLanes) dot += load<kLanes>(p + j) * load<kLanes>(g + j);
  if (full < visible) {
    dot += load_tail<kLanes>(p + full, visible - full, 0.0f) * load_tail<kLanes>(g + full, visible - full, 0.0f);
  }
  const Floats<kLanes> total = splat<kLanes>(static_cast<float>(horizontal_sum<kLanes>(dot)));
  for (int64_t j = 0; j < full; j += kLanes) {
    store<kLanes>(load<kLanes>(p + j) * (load<kLanes>(g + j) - total) * scale, dx + j);
  }
  if (full < visible) {
    const int64_t n = visible - full;
    store<kLanes>(load_tail<kLanes>(p + full, n, 0.0f) * (load_tail<kLanes>(g + full, n, 0.0f) - total) * scale,
                  dx + full, n);
  }
  std::fill(dx + visible, dx + keys, Scalar(0));
}

template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void forward_rows(const Scalar* x, Scalar* out, Rows rows, float scale, int64_t begin,
                                                int64_t end) {
  std::vector<float> scratch(rows.keys);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t at = r * rows.keys, first = rows.first(r);
    std::fill(out + at, out + at + first, Scalar(0));
    forward_row<kLanes>(x + at + first, out + at + first, scratch.data(), rows.visible(r) - first, rows.keys - first,
                        scale);
  }
}

template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void backward_rows(const Scalar* p, const Scalar* g, Scalar* dx, Rows rows, float scale,
                                                 int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t at = r * rows.keys, first = rows.first(r);
    std::fill(dx + at, dx + at + first, Scalar(0));
    backward_row<kLanes>(p + at + first, g + at + first, dx + at + first, rows.visible(r) - first, rows.keys - first,
                         scale);
  }
}

WidthChoice& causal_softmax_width_choice() {
  static WidthChoice width("causal_softmax");
  return width;
}

/// Rows per parallel_for task: about at::internal::GRAIN_SIZE elements.
int64_t grain_rows(int64_t keys) { return std::max<int64_t>(1, at::internal::GRAIN_SIZE / keys); }

/// `n` rows of `keys` scores in groups of `seq` queries; first_keys: undefined, or [B, seq] over the rows' B batches.
Rows rows_of(int64_t keys, int64_t seq, const at::Tensor& first_keys, int64_t n) {
  if (!first_keys.defined()) return Rows{keys, seq};
  return Rows{keys, seq, first_keys.data_ptr<int64_t>(), n / first_keys.size(0)};
}

class CausalSoftmax : public torch::autograd::Function<CausalSoftmax> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& scores, double scale, int64_t seq,
                            const c10::optional<at::Tensor>& first) {
    // Optional: LibTorch 1.13's Function takes no undefined tensor input.
    const at::Tensor first_keys = first.value_or(at::Tensor());
    RECORD_FUNCTION("kforge::causal_softmax", c10::ArrayRef<const c10::IValue>{});
    const at::Tensor x = scores.contiguous();
    const int64_t n = x.numel() / x.size(-1);
    const Rows rows = rows_of(x.size(-1), seq, first_keys, n);
    at::Tensor out = at::empty_like(x);
    const auto s = static_cast<float>(scale);
    const Width width = causal_softmax_width_choice().get();
    dispatch_float_or_bfloat16(x.scalar_type(), "causal_softmax", [&](auto scalar) {
      using Scalar = decltype(scalar);
      const Scalar* in = x.data_ptr<Scalar>();
      Scalar* o = out.data_ptr<Scalar>();
      at::parallel_for(0, n, grain_rows(rows.keys), [&](int64_t begin, int64_t end) {
        dispatch_width(width, [&](auto lanes) { forward_rows<lanes>(in, o, rows, s, begin, end); });
      });
    });
    ctx->save_for_backward({out, first_keys});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["seq"] = seq;
    return out;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::causal_softmax_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &p = saved[0], &first_keys = saved[1];
    const at::Tensor g = grad_outputs[0].to(p.scalar_type()).contiguous();
    const auto s = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const int64_t n = p.numel() / p.size(-1);
    const Rows rows = rows_of(p.size(-1), ctx->saved_data["seq"].toInt(), first_keys, n);
    at::Tensor dx = at::empty_like(p);
    const Width width = causal_softmax_width_choice().get();
    dispatch_float_or_bfloat16(p.scalar_type(), "causal_softmax", [&](auto scalar) {
      using Scalar = decltype(scalar);
      const Scalar* pp = p.data_ptr<Scalar>();
      const Scalar* gg = g.data_ptr<Scalar>();
      Scalar* d = dx.data_ptr<Scalar>();
      at::parallel_for(0, n, grain_rows(rows.keys), [&](int64_t begin, int64_t end) {
        dispatch_width(width, [&](auto lanes) { backward_rows<lanes>(pp, gg, d, rows, s, begin, end); });
      });
    });
    return {dx, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor causal_softmax(const at::Tensor& scores, double scale, int64_t seq, bool fused,
                          const at::Tensor& first_keys) {
  const int64_t keys = scores.dim() >= 2 ? scores.size(-1) : 0;
  const bool first_ok =
      !first_keys.defined() || (first_keys.scalar_type() == at::kLong && first_keys.is_contiguous() &&
                                first_keys.dim() == 2 && scores.dim() >= 3 && first_keys.size(0) == scores.size(0) &&
                                first_keys.size(1) == seq && first_keys.ge(0).all().item<bool>() &&
                                first_keys.le(at::arange(keys - seq, keys, first_keys.options())).all().item<bool>());
  if (scores.dim() < 2 || seq <= 0 || scores.size(-2) % seq != 0 || keys < seq || !first_ok) {
    std::ostringstream message;
    message << "causal_softmax: scores " << scores.sizes() << " on " << scores.device() << " do not fit seq = " << seq
            << " (want [..., R, Sk] with R a multiple of seq and Sk >= seq)";
    if (first_keys.defined())
      message << " or first keys " << first_keys.sizes() << " (want int64 [B, seq], each <= its query)";
    throw sdk::Error(message.str());
  }
  // The fused kernel is the CPU's; another device takes the composite through its own LibTorch ops.
  if (!fused || !scores.device().is_cpu() ||
      (scores.scalar_type() != at::kFloat && scores.scalar_type() != at::kBFloat16)) {
    at::Tensor hidden = at::ones({seq, keys}, scores.options().dtype(at::kBool)).triu(keys - seq + 1);  // the future
    at::Tensor grouped = scores.reshape({scores.size(0), -1, seq, keys});  // [B, groups, seq, Sk] (or [1, R/seq, ...])
    if (first_keys.defined()) {  // and the keys before each query's document: [B, 1, seq, Sk]
      hidden = hidden.logical_or(at::arange(keys, first_keys.options()).lt(first_keys.unsqueeze(-1))).unsqueeze(1);
    } else {
      grouped = scores.reshape({-1, seq, keys});
    }
    return at::softmax(grouped.masked_fill(hidden, -std::numeric_limits<double>::infinity()) * scale, -1)
        .view(scores.sizes());
  }
  return CausalSoftmax::apply(scores, scale, seq,
                              first_keys.defined() ? c10::optional<at::Tensor>(first_keys) : c10::nullopt);
}

Width causal_softmax_width() { return causal_softmax_width_choice().get(); }

void set_causal_softmax_width(Width width) { causal_softmax_width_choice().set(width); }

}  // namespace kforge::builtin::models
