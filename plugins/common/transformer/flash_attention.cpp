// Tiled causal attention: forward and backward kernels over BLAS tile GEMMs, and the autograd Function.
#include "flash_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "blas_gemm.h"
#include "kforge/sdk/error.h"

namespace kforge::builtin::models {
namespace {

using namespace lanes;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Query tiles of at least this many rows multiply by a transposed copy of the key tile (transpose_tile).
constexpr int64_t kTransposeFromRows = 16;

// exp(x) for x <= 0 (Cephes' single-precision range reduction and polynomial, ~1 ulp), 0 below -87
// (and for -inf). Plain arithmetic, so the loops that call it vectorise.
inline float exp_nonpositive(float x) {
  const bool underflow = x < -87.0f;
  x = underflow ? -87.0f : x;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return underflow ? 0.0f : e * scale;
}

WidthChoice& flash_attention_width_choice() {
  static WidthChoice width("flash_attention");
  return width;
}

// row[j] = exp(row[j] - shift) for j < n; returns their sum (kLanes partial sums, which vectorise).
template <int kLanes>
[[gnu::always_inline]] inline float exp_shifted_sum_lanes(float* row, int64_t n, float shift) {
  float acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      row[j + l] = exp_nonpositive(row[j + l] - shift);
      acc[l] += row[j + l];
    }
  }
  float sum = 0.0f;
  for (; j < n; ++j) {
    row[j] = exp_nonpositive(row[j] - shift);
    sum += row[j];
  }
  for (float a : acc) sum += a;
  return sum;
}

float exp_shifted_sum(float* row, int64_t n, float shift) {
  return dispatch_width(flash_attention_width_choice().get(),
                        [&](auto lanes) { return exp_shifted_sum_lanes<lanes>(row, n, shift); });
}

// dS = P * (dP - delta), in place over dP; a plain loop, vectorised at the chosen width.
void softmax_grad_row(const float* p, float* dp, int64_t n, float delta) {
  dispatch_width(flash_attention_width_choice().get(), [&](auto) {
    for (int64_t j = 0; j < n; ++j) dp[j] = p[j] * (dp[j] - delta);
  });
}

// Row-major (rows x hd) view of one (batch, head) slice starting at row `row`.
struct Slice {
  float* data;
  int64_t ld;
};

struct Shapes {
  int64_t batch, heads, kv_heads, group, sq, sk, hd, offset;
  float scale;
  const int64_t* starts;  ///< packed documents: (B, Sq) first key each query sees; null: key 0

  int64_t first_key(int64_t b, int64_t query) const { return starts ? starts[b * sq + query] : 0; }
};

Shapes shapes_of(const at::Tensor& q, const at::Tensor& k, const at::Tensor& starts) {
  Shapes s{q.size(0),
           q.size(1),
           k.size(1),
           q.size(1) / k.size(1),
           q.size(2),
           k.size(2),
           q.size(3),
           k.size(2) - q.size(2),
           static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.size(3)))),
           starts.defined() ? starts.data_ptr<int64_t>() : nullptr};
  return s;
}

Slice slice(const at::Tensor& t, int64_t b, int64_t h, int64_t row) {
  return {t.data_ptr<float>() + b * t.stride(0) + h * t.stride(1) + row * t.stride(2), t.stride(2)};
}

// to (hd x cols, row-major) = the tile of `cols` rows of `from` (row stride ld) transposed: OpenBLAS multiplies by a
// transposed operand at about half the speed of a plain one (64^3 tiles on its SkylakeX kernels: 7.3 against 4.6 us),
// and the transposed copy costs less than that difference.
void transpose_tile(const float* from, int64_t ld, int64_t cols, int64_t hd, float* to) {
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t d = 0; d < hd; ++d) to[d * cols + c] = from[c * ld + d];
  }
}

// Sets scores[r][c] to -inf where column c is after row r's last visible column, first_visible + r.
void mask_tile(float* scores, int64_t rows, int64_t cols, int64_t ld, int64_t first_visible) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = std::max<int64_t>(0, first_visible + r + 1); c < cols; ++c) scores[r * ld + c] = kNegInf;
  }
}

// The tile of queries [i0, i0 + rows) and keys [j0, j0 + cols): -inf where a key is past the query (causal) or
// before its document's start (packed documents).
void mask_scores(float* scores, const Shapes& s, int64_t b, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  if (j0 + cols - 1 > s.offset + i0) mask_tile(scores, rows, cols, cols, s.offset + i0 - j0);
  if (s.first_key(b, i0 + rows - 1) <= j0) return;  // every query's document starts at or before the tile
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t before = std::min(cols, s.first_key(b, i0 + r) - j0);
    std::fill_n(scores + r * cols, std::max<int64_t>(0, before), kNegInf);
  }
}

// out (B, H, Sq, hd) and lse (B, H, Sq), both float32 contiguous.
void forward_kernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& starts,
                    const at::Tensor& out, const at::Tensor& lse, FlashTiles t) {
  const Shapes s = shapes_of(q, k, starts);
  const int64_t q_tiles = (s.sq + t.q - 1) / t.q;
  at::parallel_for(0, s.batch * s.heads * q_tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(t.q * t.k), m(t.q), l(t.q), kt(s.hd * t.k);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / (s.heads * q_tiles), h = item / q_tiles % s.heads, i0 = item % q_tiles * t.q;
      const int64_t rows = std::min(t.q, s.sq - i0), kv = h / s.group;
      const int64_t last_key = s.offset + i0 + rows - 1;  // the tile's last query sees keys up to here
      const Slice qs = slice(q, b, h, i0), os = slice(out, b, h, i0);
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(l.begin(), l.end(), 0.0f);
      for (int64_t r = 0; r < rows; ++r) std::fill_n(os.data + r * os.ld, s.hd, 0.0f);
      // Key tiles in ascending order from the one holding the first query's first key: tiles before it end
      // before every query's document (doc ids sorted: the tile's last doc id < the queries' first). Without
      // documents that is key 0, which every query sees, so m stays finite; with them a row may see nothing
      // of a tile yet.
      for (int64_t j0 = s.first_key(b, i0) / t.k * t.k; j0 <= last_key; j0 += t.k) {
        const int64_t cols = std::min(t.k, last_key + 1 - j0);
        const Slice ks = slice(k, b, kv, j0), vs = slice(v, b, kv, j0);
        if (rows >= kTransposeFromRows) {
          transpose_tile(ks.data, ks.ld, cols, s.hd, kt.data());
          gemm_rowmajor(false, false, rows, cols, s.hd, s.scale, qs.data, qs.ld, kt.data(), cols, 0.0f, scores.data(),
                        cols);
        } else {  // a few queries (decoding): the copy would cost more than it saves
          gemm_rowmajor(false, true, rows, cols, s.hd, s.scale, qs.data, qs.ld, ks.data, ks.ld, 0.0f, scores.data(),
                        cols);
        }
        mask_scores(scores.data(), s, b, i0, rows, j0, cols);
        for (int64_t r = 0; r < rows; ++r) {
          float* row = scores.data() + r * cols;
          const float row_max = std::max(m[r], *std::max_element(row, row + cols));
          if (row_max == kNegInf) {  // nothing seen yet: the row adds nothing to P V
            std::fill_n(row, cols, 0.0f);
            continue;
          }
          const float rescale = exp_nonpositive(m[r] - row_max);
          l[r] = l[r] * rescale + exp_shifted_sum(row, cols, row_max);
          m[r] = row_max;
          float* o = os.data + r * os.ld;
          for (int64_t d = 0; d < s.hd; ++d) o[d] *= rescale;
        }
        gemm_rowmajor(false, false, rows, s.hd, cols, 1.0f, scores.data(), cols, vs.data, vs.ld, 1.0f, os.data, os.ld);
      }
      float* lse_row = lse.data_ptr<float>() + (b * s.heads + h) * s.sq + i0;
      for (int64_t r = 0; r < rows; ++r) {
        float* o = os.data + r * os.ld;
        const float inv = 1.0f / l[r];
        for (int64_t d = 0; d < s.hd; ++d) o[d] *= inv;
        lse_row[r] = m[r] + std::log(l[r]);
      }
    }
  });
}

// dq (B, H, Sq, hd), dk/dv (B, KV, Sk, hd): float32 contiguous, zeroed. delta (B, H, Sq) = rowsum(dO * O).
// One task per (batch, kv head): it alone writes that head's dK/dV and its query heads' dQ.
void backward_kernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& starts,
                     const at::Tensor& grad_out, const at::Tensor& lse, const at::Tensor& delta, const at::Tensor& dq,
                     const at::Tensor& dk, const at::Tensor& dv, FlashTiles t) {
  const Shapes s = shapes_of(q, k, starts);
  at::parallel_for(0, s.batch * s.kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> p(t.q * t.k), dp(t.q * t.k), kt(s.hd * t.k), vt(s.hd * t.k);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / s.kv_heads, kv = item % s.kv_heads;
      for (int64_t j0 = 0; j0 < s.sk; j0 += t.k) {
        const int64_t cols = std::min(t.k, s.sk - j0);
        const Slice ks = slice(k, b, kv, j0), vs = slice(v, b, kv, j0), dks = slice(dk, b, kv, j0),
                    dvs = slice(dv, b, kv, j0);
        transpose_tile(ks.data, ks.ld, cols, s.hd, kt.data());  // used by every query tile of the group's heads
        transpose_tile(vs.data, vs.ld, cols, s.hd, vt.data());
        // Queries before j0 - offset see none of these keys.
        const int64_t first_query = std::max<int64_t>(0, j0 - s.offset) / t.q * t.q;
        for (int64_t h = kv * s.group; h < (kv + 1) * s.group; ++h) {
          const float* lse_h = lse.data_ptr<float>() + (b * s.heads + h) * s.sq;
          const float* delta_h = delta.data_ptr<float>() + (b * s.heads + h) * s.sq;
          // Query tiles whose first document starts after these keys, and all later ones, see none of them.
          for (int64_t i0 = first_query; i0 < s.sq && s.first_key(b, i0) < j0 + cols; i0 += t.q) {
            const int64_t rows = std::min(t.q, s.sq - i0);
            const Slice qs = slice(q, b, h, i0), gs = slice(grad_out, b, h, i0), dqs = slice(dq, b, h, i0);
            gemm_rowmajor(false, false, rows, cols, s.hd, s.scale, qs.data, qs.ld, kt.data(), cols, 0.0f, p.data(),
                          cols);
            mask_scores(p.data(), s, b, i0, rows, j0, cols);
            for (int64_t r = 0; r < rows; ++r) exp_shifted_sum(p.data() + r * cols, cols, lse_h[i0 + r]);
            // dV += P^T dO; dP = dO V^T; dS = P (dP - delta); dQ += scale dS K; dK += scale dS^T Q.
            gemm_rowmajor(true, false, cols, s.hd, rows, 1.0f, p.data(), cols, gs.data, gs.ld, 1.0f, dvs.data, dvs.ld);
            gemm_rowmajor(false, false, rows, cols, s.hd, 1.0f, gs.data, gs.ld, vt.data(), cols, 0.0f, dp.data(), cols);
            for (int64_t r = 0; r < rows; ++r) {
              softmax_grad_row(p.data() + r * cols, dp.data() + r * cols, cols, delta_h[i0 + r]);
            }
            gemm_rowmajor(false, false, rows, s.hd, cols, s.scale, dp.data(), cols, ks.data, ks.ld, 1.0f, dqs.data,
                          dqs.ld);
            gemm_rowmajor(true, false, cols, s.hd, rows, s.scale, dp.data(), cols, qs.data, qs.ld, 1.0f, dks.data,
                          dks.ld);
          }
        }
      }
    }
  });
}

// Float32 with unit stride along head_dim (other strides are read as they are, e.g. a KV-cache view).
at::Tensor as_kernel_input(const at::Tensor& t) {
  at::Tensor f = t.to(at::kFloat);
  return f.stride(3) == 1 ? f : f.contiguous();
}

void check_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, FlashTiles t,
                  const at::Tensor& starts) {
  if (starts.defined() && (starts.scalar_type() != at::kLong || !starts.is_contiguous() || starts.dim() != 2 ||
                           starts.size(0) != q.size(0) || starts.size(1) != q.size(2) || q.size(2) != k.size(2))) {
    throw sdk::Error("attention: document starts must be contiguous int64 (B, S) for q " + c10::str(q.sizes()) +
                     " and as many keys as queries (no KV cache); got " + c10::str(starts.sizes()));
  }
  const bool ok = q.dim() == 4 && k.dim() == 4 && v.sizes() == k.sizes() && q.size(0) == k.size(0) &&
                  q.size(3) == k.size(3) && k.size(1) > 0 && q.size(1) % k.size(1) == 0 && q.size(2) <= k.size(2) &&
                  t.q > 0 && t.k > 0 && flash_attention_supports(q) && k.scalar_type() == q.scalar_type() &&
                  v.scalar_type() == q.scalar_type();
  if (!ok) {
    throw sdk::Error(
        "attention: the tiled kernel takes float32/bfloat16 CPU q (B, H, Sq, hd) and k/v (B, KV, Sk, hd) "
        "with H a multiple of KV and Sq <= Sk; got q " +
        std::string(c10::toString(q.scalar_type())) + " " + c10::str(q.sizes()) + ", k " + c10::str(k.sizes()) +
        "; set [model] sdpa_backend = \"math\" "
        "for other inputs");
  }
}

class FlashAttentionFunction : public torch::autograd::Function<FlashAttentionFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const c10::optional<at::Tensor>& doc_starts, int64_t tile_q,
                            int64_t tile_k) {
    // Optional: LibTorch 1.13's Function takes no undefined tensor input.
    const at::Tensor starts = doc_starts.value_or(at::Tensor());
    RECORD_FUNCTION("kforge::flash_attention", c10::ArrayRef<const c10::IValue>{});
    const FlashTiles t{tile_q, tile_k};
    const at::Tensor qf = as_kernel_input(q), kf = as_kernel_input(k), vf = as_kernel_input(v);
    const at::Tensor out = at::empty({q.size(0), q.size(1), q.size(2), q.size(3)}, qf.options());
    const at::Tensor lse = at::empty({q.size(0), q.size(1), q.size(2)}, qf.options());
    forward_kernel(qf, kf, vf, starts, out, lse, t);
    const at::Tensor result = out.to(q.scalar_type());
    ctx->save_for_backward({q, k, v, result, lse, starts});
    ctx->saved_data["tile_q"] = tile_q;
    ctx->saved_data["tile_k"] = tile_k;
    return result;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    RECORD_FUNCTION("kforge::flash_attention_backward", c10::ArrayRef<const c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4], &starts = saved[5];
    const FlashTiles t{ctx->saved_data["tile_q"].toInt(), ctx->saved_data["tile_k"].toInt()};
    const at::Tensor grad_out = grads[0].to(at::kFloat).contiguous();
    const at::Tensor delta = (grad_out * out.to(at::kFloat)).sum(-1);
    const at::Tensor qf = as_kernel_input(q), kf = as_kernel_input(k), vf = as_kernel_input(v);
    const at::Tensor dq = at::zeros(q.sizes(), qf.options()), dk = at::zeros(k.sizes(), kf.options()),
                     dv = at::zeros(v.sizes(), vf.options());
    backward_kernel(qf, kf, vf, starts, grad_out, lse, delta, dq, dk, dv, t);
    return {dq.to(q.scalar_type()), dk.to(k.scalar_type()), dv.to(v.scalar_type()),
            at::Tensor(),           at::Tensor(),           at::Tensor()};
  }
};

}  // namespace

bool flash_attention_supports(const at::Tensor& q) {
  return q.device().is_cpu() && (q.scalar_type() == at::kFloat || q.scalar_type() == at::kBFloat16);
}

at::Tensor flash_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, FlashTiles tiles,
                           const at::Tensor& doc_starts) {
  check_inputs(q, k, v, tiles, doc_starts);
  return FlashAttentionFunction::apply(
      q, k, v, doc_starts.defined() ? c10::optional<at::Tensor>(doc_starts) : c10::nullopt, tiles.q, tiles.k);
}

Width flash_attention_width() { return flash_attention_width_choice().get(); }

void set_flash_attention_width(Width width) { flash_attention_width_choice().set(width); }

}  // namespace kforge::builtin::models
