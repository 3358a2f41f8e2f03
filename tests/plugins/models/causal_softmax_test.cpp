// The fused causal softmax (causal_softmax.h) against the composite it replaces, computed in float64:
// masked_fill of the future keys, softmax(scale * scores); values and gradients, at every vector
// width this CPU runs, for float32 and bfloat16, with tails, grouped rows and more keys than queries.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "kforge/sdk/error.h"
#include "support/every_width.h"
#include "transformer/causal_softmax.h"

namespace kforge::test {
namespace {

struct SoftmaxResult {
  at::Tensor probs, grad;
};

/// probs and d sum(probs * probe) / d scores.
template <class F>
SoftmaxResult run(const F& softmax, const at::Tensor& scores0, const at::Tensor& probe) {
  const at::Tensor scores = scores0.detach().clone().requires_grad_(true);
  const at::Tensor probs = softmax(scores);
  (probs.to(at::kDouble) * probe).sum().backward();
  return {probs.detach(), scores.grad()};
}

/// The composite in float64: row r of each [R, Sk] matrix sees keys 0 .. Sk - seq + r % seq.
SoftmaxResult reference(const at::Tensor& scores, const at::Tensor& probe, double scale, int64_t seq) {
  const int64_t rows = scores.size(-2), keys = scores.size(-1);
  const at::Tensor future = at::ones({seq, keys}, at::kBool).triu(keys - seq + 1).repeat({rows / seq, 1});
  return run(
      [&](const at::Tensor& s) {
        return at::softmax(s.to(at::kDouble).masked_fill(future, -std::numeric_limits<double>::infinity()) * scale, -1);
      },
      scores, probe);
}

void expect_softmax_matches(at::ScalarType dtype, double tolerance) {
  struct Shape {
    int64_t batch, kv, group, seq, keys;
  };
  for (const Shape& s : {Shape{2, 3, 1, 37, 37}, Shape{1, 2, 4, 5, 9}, Shape{1, 1, 2, 70, 70}, Shape{1, 1, 1, 1, 20}}) {
    SCOPED_TRACE("group " + std::to_string(s.group) + ", seq " + std::to_string(s.seq) + ", keys " +
                 std::to_string(s.keys));
    at::manual_seed(5);
    const at::Tensor scores = (at::randn({s.batch, s.kv, s.group * s.seq, s.keys}) * 3).to(dtype);
    const at::Tensor probe = at::randn(scores.sizes(), at::kDouble);
    const double scale = 0.37;
    const SoftmaxResult want = reference(scores, probe, scale, s.seq);
    at_every_width(builtin::models::causal_softmax_width, builtin::models::set_causal_softmax_width, [&] {
      const SoftmaxResult got =
          run([&](const at::Tensor& x) { return builtin::models::causal_softmax(x, scale, s.seq); }, scores, probe);
      EXPECT_EQ(got.probs.scalar_type(), dtype);
      EXPECT_LE((got.probs.to(at::kDouble) - want.probs).abs().max().item<double>(), tolerance);
      EXPECT_LE((got.grad.to(at::kDouble) - want.grad).abs().max().item<double>(),
                tolerance * (1 + want.grad.abs().max().item<double>()));
      // Masked keys are exactly 0 in both directions.
      const at::Tensor masked = want.probs.eq(0);
      EXPECT_TRUE(at::equal(got.probs.masked_select(masked), at::zeros({masked.sum().item<int64_t>()}, dtype)));
      EXPECT_TRUE(at::equal(got.grad.masked_select(masked), at::zeros({masked.sum().item<int64_t>()}, dtype)));
    });
  }
}

TEST(CausalSoftmax, Float32MatchesTheMaskedSoftmax) { expect_softmax_matches(at::kFloat, 1e-6); }

// bfloat16 in and out, float inside: each probability and gradient entry is rounded once (2^-9).
TEST(CausalSoftmax, BFloat16MatchesTheMaskedSoftmaxToItsRounding) { expect_softmax_matches(at::kBFloat16, 1.0 / 256); }

TEST(CausalSoftmax, ScoresThatDoNotFitTheSequenceAreRefused) {
  EXPECT_THROW(builtin::models::causal_softmax(at::zeros({2, 7, 7}), 1.0, 3), sdk::Error);  // 7 rows, seq 3
  EXPECT_THROW(builtin::models::causal_softmax(at::zeros({2, 6, 2}), 1.0, 3), sdk::Error);  // fewer keys than queries
}

TEST(CausalSoftmax, Float64TakesTheCompositeExactly) {
  at::manual_seed(6);
  const at::Tensor scores = at::randn({2, 8, 6}, at::kDouble);  // seq 4 in groups of 2, 6 keys
  const at::Tensor probe = at::randn({2, 8, 6}, at::kDouble);
  const SoftmaxResult want = reference(scores, probe, 0.5, 4);
  const SoftmaxResult got =
      run([](const at::Tensor& x) { return builtin::models::causal_softmax(x, 0.5, 4); }, scores, probe);
  EXPECT_TRUE(at::equal(got.probs, want.probs));
  EXPECT_TRUE(at::equal(got.grad, want.grad));
}

}  // namespace
}  // namespace kforge::test
