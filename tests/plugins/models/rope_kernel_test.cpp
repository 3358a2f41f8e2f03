// The fused RoPE op (rope_kernel.h) against the rotation in float64: value and gradient, at every vector width this CPU
// runs, float32 and bfloat16, on a transposed projection with a partial last vector, with shared and per-row tables;
// its gradient in the projection's layout; and the composite wherever the kernel does not apply.
#include "transformer/rope_kernel.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <string>

#include "kforge/sdk/error.h"
#include "support/every_width.h"
#include "transformer/rope.h"

namespace kforge::test {
namespace {

using builtin::models::apply_rope;
using builtin::models::fused_rope;

constexpr int64_t kBatch = 2, kSeq = 37, kHeads = 3, kHeadDim = 44;  // 22 pairs: a partial last vector at every width

struct Tables {
  at::Tensor cos, sin;
};

/// Tables in `dtype` shared by every row, (S, hd / 2), or per row (B, 1, S, hd / 2) from packed positions.
Tables tables(at::ScalarType dtype, bool per_row) {
  builtin::models::RopeTables rope(kHeadDim, 64, 10000.0);
  const at::Tensor like = at::zeros({}, dtype);
  if (!per_row) {
    const auto [cos, sin] = rope.slice(kSeq, like);
    return {cos, sin};
  }
  const at::Tensor positions = at::arange(kSeq, at::kLong).remainder(11).expand({kBatch, kSeq}).contiguous();
  const auto [cos, sin] = rope.gather(positions + at::arange(kBatch, at::kLong).view({kBatch, 1}), like);
  return {cos, sin};
}

/// Per element, the sum of the magnitudes the rotation of its pair adds: (|a| + |b|)(|cos| + |sin|), in float64.
at::Tensor pair_scale(const at::Tensor& x, const Tables& t) {
  const at::Tensor d = x.to(at::kDouble).abs();
  const at::Tensor m = (d.narrow(-1, 0, kHeadDim / 2) + d.narrow(-1, kHeadDim / 2, kHeadDim / 2)) *
                       (t.cos.to(at::kDouble).abs() + t.sin.to(at::kDouble).abs());
  return at::cat({m, m}, -1);
}

/// |got - want| <= bound elementwise; reports the worst ratio.
void expect_within(const at::Tensor& got, const at::Tensor& want, const at::Tensor& bound, const std::string& what) {
  const at::Tensor ratio = (got.to(at::kDouble) - want).abs() / (bound + 1e-300);
  EXPECT_LE(ratio.max().item<double>(), 1.0) << what;
}

/// Value and gradient of the fused op against the float64 rotation of the same (dtype-representable) inputs. Each
/// output is two products and a sum computed in float (three roundings, each at most 2^-24 of the pair's magnitudes),
/// then, for bfloat16, rounded once to it (at most 2^-8 of the value: 8 significant bits).
void expect_rope_matches(at::ScalarType dtype, bool per_row) {
  at::manual_seed(per_row ? 31 : 30);
  const Tables t = tables(dtype, per_row);
  const at::Tensor projected = (at::randn({kBatch, kSeq, kHeads, kHeadDim}) * 3).to(dtype);
  const at::Tensor probe = at::randn({kBatch, kHeads, kSeq, kHeadDim}).to(dtype);  // reaches the kernel unrounded
  const double rounding = dtype == at::kBFloat16 ? std::ldexp(1.0, -8) : 0.0;

  const at::Tensor x64 = projected.to(at::kDouble).transpose(1, 2).requires_grad_();
  const at::Tensor want = apply_rope(x64, t.cos.to(at::kDouble), t.sin.to(at::kDouble));  // the composite
  const at::Tensor want_grad = torch::autograd::grad({want}, {x64}, {probe.to(at::kDouble)})[0];

  at_every_width(builtin::models::rope_width, builtin::models::set_rope_width, [&] {
    const at::Tensor leaf = projected.detach().requires_grad_();
    const at::Tensor x = leaf.transpose(1, 2);
    ASSERT_TRUE(builtin::models::fused_rope_applies(x, t.cos, t.sin));
    const at::Tensor got = fused_rope(x, t.cos, t.sin);
    EXPECT_EQ(got.scalar_type(), dtype);
    EXPECT_TRUE(got.is_contiguous());
    const at::Tensor got_grad = torch::autograd::grad({got}, {x}, {probe})[0];
    expect_within(got, want.detach(),
                  std::ldexp(4.0, -24) * pair_scale(projected.transpose(1, 2), t) + rounding * want.detach().abs(),
                  "value");
    expect_within(got_grad, want_grad, std::ldexp(4.0, -24) * pair_scale(probe, t) + rounding * want_grad.abs(),
                  "gradient");
    // The gradient comes in the projection's layout: (B, S, H, hd) memory, so its view back needs no copy.
    EXPECT_EQ(got_grad.strides(), x.strides());
  });
}

TEST(FusedRope, Float32MatchesTheFloat64Rotation) { expect_rope_matches(at::kFloat, false); }

TEST(FusedRope, Float32WithPerRowTablesMatchesTheFloat64Rotation) { expect_rope_matches(at::kFloat, true); }

TEST(FusedRope, BFloat16MatchesTheFloat64RotationToItsRounding) { expect_rope_matches(at::kBFloat16, false); }

TEST(FusedRope, ApplyRopeTakesTheCompositeWhereTheKernelDoesNotApplyOrIsOff) {
  const Tables t = tables(at::kDouble, false);
  const at::Tensor x = at::randn({kBatch, kHeads, kSeq, kHeadDim}, at::kDouble);
  EXPECT_FALSE(builtin::models::fused_rope_applies(x, t.cos, t.sin));  // float64: gradient checks
  EXPECT_THROW(fused_rope(x, t.cos, t.sin), sdk::Error);
  const int64_t half = kHeadDim / 2;
  const at::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  EXPECT_TRUE(at::equal(apply_rope(x, t.cos, t.sin), at::cat({x1 * t.cos - x2 * t.sin, x2 * t.cos + x1 * t.sin}, -1)));
  const Tables f = tables(at::kFloat, false);
  const at::Tensor xf = x.to(at::kFloat);
  EXPECT_TRUE(builtin::models::fused_rope_applies(xf, f.cos, f.sin));
  EXPECT_FALSE(builtin::models::fused_rope_applies(xf, f.cos.to(at::kBFloat16), f.sin.to(at::kBFloat16)));
  EXPECT_FALSE(builtin::models::fused_rope_applies(xf.narrow(-1, 0, kHeadDim - 2), f.cos, f.sin));  // wrong pairs
  const at::Tensor xf1 = xf.narrow(-1, 0, half), xf2 = xf.narrow(-1, half, half);
  EXPECT_TRUE(at::equal(apply_rope(xf, f.cos, f.sin, /*fused=*/false),
                        at::cat({xf1 * f.cos - xf2 * f.sin, xf2 * f.cos + xf1 * f.sin}, -1)));
}

}  // namespace
}  // namespace kforge::test
