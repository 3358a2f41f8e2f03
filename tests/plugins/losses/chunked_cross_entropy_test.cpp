// chunked_cross_entropy equals cross_entropy in value and gradient for every chunking.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kforge/sdk/loss.h"
#include "plugins/losses/loss_fixture.h"
#include "support/max_abs_diff.h"

namespace kforge::test {
namespace {

void expect_chunked_equals_plain(at::ScalarType dtype, double z, double tolerance) {
  const std::string z_line = "z_loss_weight = " + std::to_string(z) + "\n";
  const at::Tensor logits = seeded_logits(11, 2, 5, 13, dtype);  // 10 tokens
  const at::Tensor labels = seeded_labels(12, 2, 5, 13, 0.3);
  ASSERT_GT(labels.eq(sdk::kIgnoreIndex).sum().item<int64_t>(), 0) << "the case must include ignored labels";
  LossUnderTest plain("loss_fn = \"cross_entropy\"\n" + z_line);
  const ValueAndGrad want = value_and_grad(*plain.loss, logits, labels);
  // 1, 3, 4, 7, 9: uneven last chunk; 10: exactly one chunk; 16 and 0 (-> 4096): more than all tokens.
  for (int64_t chunk : {1, 3, 4, 7, 9, 10, 16, 0}) {
    LossUnderTest chunked("loss_fn = \"chunked_cross_entropy\"\nce_chunk_size = " + std::to_string(chunk) + "\n" + z_line);
    const ValueAndGrad got = value_and_grad(*chunked.loss, logits, labels);
    EXPECT_NEAR(got.value.item<double>(), want.value.item<double>(), tolerance) << "chunk " << chunk;
    EXPECT_LE(max_abs_diff(got.grad, want.grad), tolerance) << "chunk " << chunk;
  }
}

TEST(ChunkedCrossEntropy, EqualsPlainInValueAndGradientFloat64) { expect_chunked_equals_plain(at::kDouble, 0.0, 1e-14); }

TEST(ChunkedCrossEntropy, EqualsPlainInValueAndGradientFloat32) { expect_chunked_equals_plain(at::kFloat, 0.0, 1e-6); }

TEST(ChunkedCrossEntropy, EqualsPlainWithZLoss) { expect_chunked_equals_plain(at::kDouble, 0.01, 1e-14); }

TEST(ChunkedCrossEntropy, ChunkWithOnlyIgnoredLabelsContributesNothing) {
  // Tokens 0-3 ignored: with chunk 4 the first chunk is fully masked; the mean is over tokens 4-7.
  LossUnderTest chunked("loss_fn = \"chunked_cross_entropy\"\nce_chunk_size = 4\n");
  LossUnderTest plain("loss_fn = \"cross_entropy\"\n");
  const at::Tensor logits = seeded_logits(21, 1, 8, 6, at::kDouble);
  at::Tensor labels = seeded_labels(22, 1, 8, 6, 0.0);
  labels.narrow(1, 0, 4).fill_(sdk::kIgnoreIndex);
  const ValueAndGrad got = value_and_grad(*chunked.loss, logits, labels);
  const ValueAndGrad want = value_and_grad(*plain.loss, logits.narrow(1, 4, 4), labels.narrow(1, 4, 4));
  EXPECT_NEAR(got.value.item<double>(), want.value.item<double>(), 1e-14);
  EXPECT_TRUE(at::equal(got.grad.narrow(1, 0, 4), at::zeros({1, 4, 6}, at::kDouble)));
  EXPECT_LE(max_abs_diff(got.grad.narrow(1, 4, 4), want.grad), 1e-14);
}

}  // namespace
}  // namespace kforge::test
