// Test helper: an attention kernel's output and q/k/v gradients on seeded inputs, and their comparison.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "support/max_abs_diff.h"

namespace kforge::test {

struct AttentionGrads {
  at::Tensor out, dq, dk, dv;  ///< float64
};

struct AttentionShape {
  int64_t batch, heads, kv_heads, sq, sk, hd;
};

/// Output and gradients of sum(out * weight) through attend(q, k, v): q (B, H, Sq, hd), k/v (B, KV, Sk, hd)
/// and weight drawn in float32 from `seed`, q/k/v then cast to `dtype` (weight in float64 for float64, else
/// float32).
template <typename Attend>
AttentionGrads attention_grads(const AttentionShape& s, at::ScalarType dtype, Attend attend, uint64_t seed = 7) {
  at::manual_seed(seed);
  const at::Tensor q0 = at::randn({s.batch, s.heads, s.sq, s.hd});
  const at::Tensor k0 = at::randn({s.batch, s.kv_heads, s.sk, s.hd});
  const at::Tensor v0 = at::randn({s.batch, s.kv_heads, s.sk, s.hd});
  const at::Tensor weight =
      at::randn({s.batch, s.heads, s.sq, s.hd}).to(dtype == at::kDouble ? at::kDouble : at::kFloat);
  at::Tensor q = q0.to(dtype).requires_grad_(), k = k0.to(dtype).requires_grad_(), v = v0.to(dtype).requires_grad_();
  const at::Tensor out = attend(q, k, v);
  (out.to(weight.scalar_type()) * weight).sum().backward();
  return {out.detach().to(at::kDouble), q.grad().to(at::kDouble), k.grad().to(at::kDouble), v.grad().to(at::kDouble)};
}

/// Each of out, dq, dk, dv within tol * max(1, max |want|).
inline void expect_close(const AttentionGrads& got, const AttentionGrads& want, double tol) {
  const auto check = [tol](const at::Tensor& g, const at::Tensor& w, const char* what) {
    EXPECT_LE(max_abs_diff(g, w), tol * std::max(1.0, w.abs().max().item<double>())) << what;
  };
  check(got.out, want.out, "output");
  check(got.dq, want.dq, "dq");
  check(got.dk, want.dk, "dk");
  check(got.dv, want.dv, "dv");
}

}  // namespace kforge::test
