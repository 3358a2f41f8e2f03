// Gradient averaging and step agreement (loss, finiteness, trained tokens) between two data-parallel ranks (threads),
// against hand-computed means and sums.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "parallel/data_parallel.h"
#include "support/two_ranks.h"

namespace kforge::test {
namespace {

TEST(DataParallel, GradientsBecomeTheMeanOverRanksInEveryBucket) {
  std::vector<std::vector<at::Tensor>> grads(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const double r = rt.rank();
    // Three float tensors, one double (its own bucket), and one without a gradient on rank 0.
    std::vector<sdk::NamedParameter> params;
    for (int k = 0; k < 3; ++k) {
      at::Tensor p = at::zeros({2, 3}).requires_grad_();
      p.mutable_grad() = at::full({2, 3}, (r + 1) * (k + 1));
      params.push_back({"w" + std::to_string(k), p});
    }
    at::Tensor d = at::zeros({4}, at::kDouble).requires_grad_();
    d.mutable_grad() = at::arange(4, at::kDouble) * (r + 1);
    params.push_back({"d", d});
    at::Tensor unused = at::zeros({2}).requires_grad_();
    if (r == 1) unused.mutable_grad() = at::full({2}, 4.0);
    params.push_back({"unused", unused});
    // 48-byte buckets (two of the float tensors fill one): several all_reduces run.
    parallel::average_gradients(rt.dp(), params, /*bucket_bytes=*/48);
    for (const auto& p : params) grads[static_cast<size_t>(rt.rank())].push_back(p.tensor.grad());
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (int rank = 0; rank < 2; ++rank) {
    const auto& g = grads[static_cast<size_t>(rank)];
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(at::equal(g[k], at::full({2, 3}, 1.5 * (k + 1)))) << k;  // (1 + 2) / 2
    EXPECT_TRUE(at::equal(g[3], at::arange(4, at::kDouble) * 1.5));
    EXPECT_TRUE(at::equal(g[4], at::full({2}, 2.0)));  // (0 + 4) / 2
  }
}

TEST(DataParallel, StepLossIsTheMeanAndANanOnOneRankSkipsTheStepEverywhere) {
  std::vector<parallel::StepResult> finite(2), one_nan(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const size_t r = static_cast<size_t>(rt.rank());
    finite[r] = parallel::average_step_result(rt.dp(), {1.0 + static_cast<double>(r), 0.5}, 1).result;
    one_nan[r] = parallel::average_step_result(rt.dp(), {r == 1 ? std::nan("") : 2.0, 0.5}, 1).result;
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_DOUBLE_EQ(finite[r].loss, 1.5);
    EXPECT_DOUBLE_EQ(finite[r].grad_norm, 0.5);
    EXPECT_FALSE(std::isfinite(one_nan[r].grad_norm)) << "rank " << r << " must skip the update too";
  }
  EXPECT_TRUE(std::isnan(one_nan[1].loss));
}

TEST(DataParallel, TheStepsTrainedTokensAreTheSumOverRanksWhateverTheLoss) {
  std::vector<int64_t> one_empty(2), one_nan(2), none(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const size_t r = static_cast<size_t>(rt.rank());
    one_empty[r] = parallel::average_step_result(rt.dp(), {1.0, 0.5}, r == 0 ? 0 : 37).trained_tokens;
    one_nan[r] = parallel::average_step_result(rt.dp(), {r == 1 ? std::nan("") : 1.0, 0.5}, 20 + r).trained_tokens;
    none[r] = parallel::average_step_result(rt.dp(), {0.0, 0.0}, 0).trained_tokens;
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(one_empty, (std::vector<int64_t>{37, 37})) << "one rank's tokens train the step on both";
  EXPECT_EQ(one_nan, (std::vector<int64_t>{41, 41}));
  EXPECT_EQ(none, (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace kforge::test
