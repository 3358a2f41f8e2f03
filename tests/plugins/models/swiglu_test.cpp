// The fused SwiGLU op (swiglu.h) against silu(gate) * up in float64: value and both gradients, at
// every vector width this CPU runs, float32 and bfloat16, with a partial last vector and a frozen side.
#include "transformer/swiglu.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "kforge/sdk/error.h"
#include "support/binary_op_grads.h"
#include "support/every_width.h"
#include "support/max_abs_diff.h"

namespace kforge::test {
namespace {

/// Every output within `tolerance` relative to its own size (plus a 1e-7 floor).
void expect_swiglu_matches(at::ScalarType dtype, double tolerance) {
  at::manual_seed(9);
  const at::Tensor gate = (at::randn({3, 7, 45}) * 4).to(dtype);  // 945 elements: a partial last vector
  const at::Tensor up = at::randn({3, 7, 45}).to(dtype);
  // Representable in dtype, so the upstream gradient reaches the kernel unrounded.
  const at::Tensor probe = at::randn({3, 7, 45}).to(dtype).to(at::kDouble);
  const BinaryOpGrads want = binary_op_grads(
      [](const at::Tensor& g, const at::Tensor& u) { return at::silu(g.to(at::kDouble)) * u.to(at::kDouble); }, gate,
      up, probe);
  at_every_width(builtin::models::swiglu_width, builtin::models::set_swiglu_width, [&] {
    const BinaryOpGrads got =
        binary_op_grads([](const at::Tensor& g, const at::Tensor& u) { return builtin::models::swiglu(g, u); }, gate, up, probe);
    EXPECT_EQ(got.out.scalar_type(), dtype);
    EXPECT_LE(max_abs_diff(got.out, want.out), tolerance * (1e-7 / tolerance + want.out.abs().max().item<double>()));
    EXPECT_LE(max_abs_diff(got.da, want.da), tolerance * (1e-7 / tolerance + want.da.abs().max().item<double>()));
    EXPECT_LE(max_abs_diff(got.db, want.db), tolerance * (1e-7 / tolerance + want.db.abs().max().item<double>()));
  });
}

TEST(SwiGlu, Float32MatchesSiluTimesUp) { expect_swiglu_matches(at::kFloat, 1e-6); }

// bfloat16 in and out, float inside: each entry rounded once (2^-9 relative).
TEST(SwiGlu, BFloat16MatchesSiluTimesUpToItsRounding) { expect_swiglu_matches(at::kBFloat16, 1.0 / 256); }

TEST(SwiGlu, OnlyTheNeededGradientIsComputed) {
  const at::Tensor gate = at::randn({5, 3}).requires_grad_(true);
  const at::Tensor up = at::randn({5, 3});  // frozen side
  builtin::models::swiglu(gate, up).sum().backward();
  ASSERT_TRUE(gate.grad().defined());
  const at::Tensor s = at::sigmoid(gate.detach());
  EXPECT_TRUE(at::allclose(gate.grad(), up * s * (1 + gate.detach() * (1 - s)), 1e-6, 1e-7));
}

TEST(SwiGlu, MismatchedInputsAreRefused) {
  EXPECT_THROW(builtin::models::swiglu(at::zeros({2, 3}), at::zeros({3, 2})), sdk::Error);
  EXPECT_THROW(builtin::models::swiglu(at::zeros({2, 3}), at::zeros({2, 3}, at::kBFloat16)), sdk::Error);
}

TEST(SwiGlu, Float64TakesTheCompositeExactly) {
  const at::Tensor gate = at::randn({4, 5}, at::kDouble), up = at::randn({4, 5}, at::kDouble);
  EXPECT_TRUE(at::equal(builtin::models::swiglu(gate, up), at::silu(gate) * up));
}

}  // namespace
}  // namespace kforge::test
