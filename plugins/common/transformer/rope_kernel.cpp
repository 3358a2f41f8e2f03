// The fused RoPE op (see rope_kernel.h).
#include "rope_kernel.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <array>
#include <vector>

namespace kforge::builtin::models {
namespace {

using namespace lanes;

/// A (B, H, S, ·) tensor's first three strides: where row (b, h, s) starts.
using RowStrides = std::array<int64_t, 3>;

RowStrides row_strides(const at::Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2)}; }

/// One row's pairs (a_i, b_i) = (in[i], in[half + i]) turned by the angle whose cosine and sine are c_i and
/// `sign` s_i: out[i] = a c - b (sign s), out[half + i] = b c + a (sign s). The backward turns back (sign -1).
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline void rotate_row(const Scalar* in, const Scalar* c, const Scalar* s, float sign,
                                              Scalar* out, int64_t half) {
  for (int64_t i = 0; i < half; i += kLanes) {
    const int64_t count = std::min<int64_t>(kLanes, half - i);
    const bool full = count == kLanes;
    const Floats<kLanes> a = full ? load<kLanes>(in + i) : load_tail<kLanes>(in + i, count, 0.0f);
    const Floats<kLanes> b = full ? load<kLanes>(in + half + i) : load_tail<kLanes>(in + half + i, count, 0.0f);
    const Floats<kLanes> cv = full ? load<kLanes>(c + i) : load_tail<kLanes>(c + i, count, 0.0f);
    const Floats<kLanes> sv = (full ? load<kLanes>(s + i) : load_tail<kLanes>(s + i, count, 0.0f)) * sign;
    store<kLanes>(a * cv - b * sv, out + i, count);
    store<kLanes>(b * cv + a * sv, out + half + i, count);
  }
}

WidthChoice& rope_width_choice() {
  static WidthChoice width("rope");
  return width;
}

/// Turns every row of `in` (B, H, S, head_dim) into `out` (the same sizes): by the tables' angle, or back (sign -1).
void rotate(const at::Tensor& in, const at::Tensor& cos, const at::Tensor& sin, float sign, at::Tensor& out) {
  const int64_t heads = in.size(1), seq = in.size(2), head_dim = in.size(3), half = head_dim / 2;
  const RowStrides is = row_strides(in), cs = row_strides(cos), ss = row_strides(sin), os = row_strides(out);
  const int64_t rows = in.size(0) * heads * seq;
  const Width width = rope_width_choice().get();
  dispatch_float_or_bfloat16(in.scalar_type(), "rope", [&](auto scalar) {
    using Scalar = decltype(scalar);
    const Scalar *ip = in.data_ptr<Scalar>(), *cp = cos.data_ptr<Scalar>(), *sp = sin.data_ptr<Scalar>();
    Scalar* op = out.data_ptr<Scalar>();
    at::parallel_for(
        0, rows, std::max<int64_t>(1, at::internal::GRAIN_SIZE / head_dim), [&](int64_t begin, int64_t end) {
          dispatch_width(width, [&](auto lanes) {
            for (int64_t r = begin; r < end; ++r) {
              const int64_t b = r / (heads * seq), h = r / seq % heads, s = r % seq;
              auto start = [&](const RowStrides& st) { return b * st[0] + h * st[1] + s * st[2]; };
              rotate_row<lanes>(ip + start(is), cp + start(cs), sp + start(ss), sign, op + start(os), half);
            }
          });
        });
  });
}

/// The tables as (B, H, S, head_dim / 2) views of x's batch and heads (strides 0 where they broadcast).
at::Tensor expand_table(const at::Tensor& table, const at::Tensor& x) {
  const at::Tensor four = table.dim() == 2 ? table.view({1, 1, table.size(0), table.size(1)}) : table;
  return four.expand({x.size(0), x.size(1), x.size(2), x.size(3) / 2});
}

class Rope : public torch::autograd::Function<Rope> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos,
                            const at::Tensor& sin) {
    RECORD_FUNCTION("kforge::rope", c10::ArrayRef<const c10::IValue>{});
    const at::Tensor c = expand_table(cos, x), s = expand_table(sin, x);
    at::Tensor out = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    rotate(x, c, s, 1.0f, out);
    ctx->save_for_backward({c, s});
    // The gradient for x takes x's layout when that is a dense one (a transposed projection's), else contiguous.
    ctx->saved_data["sizes"] = x.sizes().vec();
    ctx->saved_data["strides"] = x.is_non_overlapping_and_dense() ? x.strides().vec() : out.strides().vec();
    return out;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    RECORD_FUNCTION("kforge::rope_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &c = saved[0], &s = saved[1];
    const at::Tensor grad = grad_outputs[0].to(c.scalar_type());
    const at::Tensor g = grad.stride(3) == 1 ? grad : grad.contiguous();
    at::Tensor dx = at::empty_strided(ctx->saved_data["sizes"].toIntVector(), ctx->saved_data["strides"].toIntVector(),
                                      g.options());
    rotate(g, c, s, -1.0f, dx);
    return {dx, at::Tensor(), at::Tensor()};
  }
};

bool table_fits(const at::Tensor& table, const at::Tensor& x) {
  if (table.scalar_type() != x.scalar_type() || !table.device().is_cpu() || table.stride(-1) != 1) return false;
  const int64_t half = x.size(3) / 2;
  if (table.dim() == 2) return table.size(0) == x.size(2) && table.size(1) == half;
  return table.dim() == 4 && table.size(0) == x.size(0) && table.size(1) == 1 && table.size(2) == x.size(2) &&
         table.size(3) == half;
}

}  // namespace

bool fused_rope_applies(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  if (x.dim() != 4 || !x.device().is_cpu() || x.size(3) % 2 != 0 || x.stride(3) != 1) return false;
  if (x.scalar_type() != at::kFloat && x.scalar_type() != at::kBFloat16) return false;
  return table_fits(cos, x) && table_fits(sin, x);
}

at::Tensor fused_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  if (!fused_rope_applies(x, cos, sin)) {
    throw sdk::Error("fused_rope: x " + c10::str(x.sizes()) + " " + c10::toString(x.scalar_type()) + " and tables " +
                     c10::str(cos.sizes()) + " are not a layout the fused kernel takes (see fused_rope_applies)");
  }
  return Rope::apply(x, cos, sin);
}

Width rope_width() { return rope_width_choice().get(); }

void set_rope_width(Width width) { rope_width_choice().set(width); }

}  // namespace kforge::builtin::models
