// Token weights (core/parallel/token_weights.h): the counts of every rank's batches, weights of exactly 1 for equal
// counts, and the weighted mean of per-batch token means equal to the token mean of all the batches.
#include "parallel/token_weights.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "support/two_ranks.h"

namespace kforge::test {
namespace {

TEST(TokenWeights, TrainedTokensAreTheLabelsOtherThanMinus100) {
  EXPECT_EQ(parallel::trained_tokens(at::tensor({3, -100, 0, -100, 7}, at::kLong)), 3);
  EXPECT_EQ(parallel::trained_tokens(at::full({2, 3}, -100, at::kLong)), 0);
}

TEST(TokenWeights, EqualCountsWeighExactlyOneAndNoTokenAnywhereWeighsOne) {
  const dist::Group alone;
  EXPECT_EQ(parallel::token_weights({7, 7, 7}, alone), (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(parallel::token_weights({0, 0}, alone), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(parallel::token_weights({1, 3}, alone), (std::vector<double>{0.5, 1.5}));
}

// Rank 0's two batches train 2 and 6 tokens, rank 1's 4 and 4 (16 in all, 4 batches): the weights are count x 4 / 16,
// and the mean of weight x batch mean over the four batches is the mean over the 16 tokens.
TEST(TokenWeights, OverTwoRanksTheWeightedMeanOfBatchMeansIsTheMeanOverEveryToken) {
  const std::vector<std::vector<int64_t>> counts = {{2, 6}, {4, 4}};
  const std::vector<std::vector<double>> means = {{1.0, 3.0}, {5.0, 7.0}};  // per-token losses all equal in a batch
  std::vector<std::vector<double>> weights(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const size_t r = static_cast<size_t>(rt.rank());
    weights[r] = parallel::token_weights(counts[r], rt.dp());
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(weights[0], (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(weights[1], (std::vector<double>{1.0, 1.0}));
  double weighted = 0, token_sum = 0, tokens = 0;
  for (size_t r = 0; r < 2; ++r) {
    for (size_t k = 0; k < 2; ++k) {
      weighted += weights[r][k] * means[r][k] / 4;
      token_sum += means[r][k] * static_cast<double>(counts[r][k]);
      tokens += static_cast<double>(counts[r][k]);
    }
  }
  EXPECT_DOUBLE_EQ(weighted, token_sum / tokens);
}

}  // namespace
}  // namespace kforge::test
