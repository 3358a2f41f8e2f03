// The fused RMSNorm op (rms_norm_kernel.h) against x * rsqrt(mean(x^2) + eps) * w in float64: value
// and the gradients of x and weight, at every vector width this CPU runs, float32 and bfloat16 x.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "kforge/sdk/error.h"
#include "support/binary_op_grads.h"
#include "support/every_width.h"
#include "transformer/rms_norm_kernel.h"

namespace kforge::test {
namespace {

/// |got - want| <= tolerance * max |want| for each output.
void expect_close(const at::Tensor& got, const at::Tensor& want, double tolerance, const char* what) {
  EXPECT_LE((got.to(at::kDouble) - want).abs().max().item<double>(), tolerance * want.abs().max().item<double>())
      << what;
}

void expect_rms_norm_matches(at::ScalarType dtype, double tolerance) {
  at::manual_seed(13);
  for (const int64_t n : {64, 37, 520}) {  // whole vectors, a tail, and rows spanning row blocks below
    SCOPED_TRACE("width " + std::to_string(n));
    const at::Tensor x = (at::randn({3, 70, n}) * 2).to(dtype);  // 210 rows: four 64-row gradient blocks
    const at::Tensor w = at::rand({n}) + 0.5;
    // Representable in dtype, so the upstream gradient reaches the kernel unrounded.
    const at::Tensor probe = at::randn({3, 70, n}).to(dtype).to(at::kDouble);
    const double eps = 1e-5;
    const BinaryOpGrads want = binary_op_grads(
        [eps](const at::Tensor& a, const at::Tensor& b) {
          const at::Tensor ad = a.to(at::kDouble);
          return ad * at::rsqrt(ad.pow(2).mean(-1, true) + eps) * b.to(at::kDouble);
        },
        x, w, probe);
    at_every_width(builtin::models::rms_norm_width, builtin::models::set_rms_norm_width, [&] {
      const BinaryOpGrads got = binary_op_grads(
          [eps](const at::Tensor& a, const at::Tensor& b) { return builtin::models::fused_rms_norm(a, b, eps); }, x, w, probe);
      EXPECT_EQ(got.out.scalar_type(), dtype);
      expect_close(got.out, want.out, tolerance, "output");
      expect_close(got.da, want.da, tolerance, "input gradient");
      EXPECT_EQ(got.db.scalar_type(), at::kFloat);
      expect_close(got.db, want.db, 1e-5, "weight gradient");  // accumulated in float either way
    });
  }
}

TEST(FusedRmsNorm, Float32MatchesTheFormula) { expect_rms_norm_matches(at::kFloat, 1e-6); }

// bfloat16 x and output, float inside: each entry rounded once (2^-9 relative).
TEST(FusedRmsNorm, BFloat16MatchesTheFormulaToItsRounding) { expect_rms_norm_matches(at::kBFloat16, 1.0 / 256); }

TEST(FusedRmsNorm, OnlyTheNeededGradientIsComputed) {
  const at::Tensor x = at::randn({4, 8}).requires_grad_(true);
  const at::Tensor w = at::ones({8});  // frozen
  builtin::models::fused_rms_norm(x, w, 1e-5).sum().backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
}

TEST(FusedRmsNorm, AppliesOnlyToFloat32OrBFloat16WithAFloat32Weight) {
  EXPECT_TRUE(builtin::models::fused_rms_norm_applies(at::randn({2, 8}), at::ones({8})));
  EXPECT_TRUE(builtin::models::fused_rms_norm_applies(at::randn({2, 8}).to(at::kBFloat16), at::ones({8})));
  EXPECT_FALSE(builtin::models::fused_rms_norm_applies(at::randn({2, 8}, at::kDouble), at::ones({8}, at::kDouble)));
  EXPECT_FALSE(builtin::models::fused_rms_norm_applies(at::randn({2, 8}), at::ones({7})));
  EXPECT_THROW(builtin::models::fused_rms_norm(at::randn({2, 8}), at::ones({7}), 1e-5), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
