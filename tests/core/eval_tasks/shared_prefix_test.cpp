// The scorer's shared-prefix scoring over a causal stand-in model: which pairs share a context (one prefix decode per
// context of two or more whole pairs, the rest batched whole), and the same results as scoring every pair whole.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <optional>

#include "data/tokenizer.h"
#include "eval_tasks/scorer.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test::eval_tasks {
namespace {
using kforge::eval_tasks::ScoringModel;
using kforge::eval_tasks::TokenPair;

constexpr int64_t kVocab = 8;

/// Logits [B, T, kVocab] of a causal stand-in: position t's logit v is the sum over s <= t of
/// sin(0.37 (token_s + 1) (v + 1) + s), in float64, summed in position order whatever the width.
at::Tensor causal_logits(const at::Tensor& tokens) {
  const at::Tensor v = at::arange(1, kVocab + 1, at::kDouble);
  const at::Tensor s = at::arange(tokens.size(1), at::kDouble).view({1, -1, 1});
  const at::Tensor t = (tokens.to(at::kDouble) + 1).unsqueeze(-1);
  return at::sin(0.37 * t * v + s).cumsum(1);
}

struct Calls {
  int forwards = 0;
  std::vector<int64_t> prefixes;  ///< each shared prefix's length
  std::vector<int64_t> rows;      ///< rows of each continuation call
};

ScoringModel stand_in(Calls& calls, bool shared) {
  ScoringModel m;
  m.forward = [&calls](const at::Tensor& tokens) {
    ++calls.forwards;
    return causal_logits(tokens);
  };
  m.max_length = 12;
  m.batch_size = 2;
  if (shared) {
    m.shared_prefix = [&calls](const at::Tensor& prefix, int64_t room) {
      calls.prefixes.push_back(prefix.size(1));
      return [&calls, prefix, room](const at::Tensor& rows) {
        EXPECT_LE(rows.size(1), room);
        calls.rows.push_back(rows.size(0));
        const at::Tensor whole = at::cat({prefix.expand({rows.size(0), prefix.size(1)}), rows}, 1);
        return causal_logits(whole).narrow(1, prefix.size(1), rows.size(1));
      };
    };
  }
  return m;
}

TEST(SharedPrefixScoring, OneDecodePerSharedContextAndTheResultsOfScoringEveryPairWhole) {
  const std::vector<TokenPair> pairs = {
      {{1, 2, 3, 4}, {5}},        {{1, 2, 3, 4}, {6, 7}},    {{1, 2, 3, 4}, {2, 2, 1}},  // one context, 3 choices
      {{3, 3}, {4}},              {{3, 3}, {1, 5}},                                       // another, 2
      {{1, 2, 3, 4}, {5}},                                                                // a repeat of the first's
      {{7}, {1}},                 {{7}, {2}},                 // a one-token context: nothing to decode first
      {{6, 5, 4}, {3}},                                       // alone
      {std::vector<int64_t>(12, 1), {2, 3}},  // 14 tokens: cut to max_length + 1, so not shared
      {std::vector<int64_t>(12, 1), {4}}};    // 13: whole, but then alone
  const data::Tokenizer tokenizer(tiny_tokenizer(temp_dir("shared_prefix_tokenizer")));
  Calls plain_calls, shared_calls;
  const auto plain = kforge::eval_tasks::Scorer(stand_in(plain_calls, false), tokenizer).loglikelihood(pairs);
  const auto shared = kforge::eval_tasks::Scorer(stand_in(shared_calls, true), tokenizer).loglikelihood(pairs);
  ASSERT_EQ(plain.size(), pairs.size());
  ASSERT_EQ(shared.size(), pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(shared[i].loglikelihood, plain[i].loglikelihood) << i;  // the same float64 sums of the same positions
    EXPECT_EQ(shared[i].greedy, plain[i].greedy) << i;
  }
  EXPECT_EQ(plain_calls.forwards, 6);  // 11 pairs, 2 a batch
  // The first context's 4 pairs (3 continuations of the prefix's 3 tokens, 2 rows a call) and the second's 2 (its 1);
  // the 5 others whole: 3 batches.
  EXPECT_EQ(shared_calls.prefixes, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(shared_calls.rows, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(shared_calls.forwards, 3);
}

}  // namespace
}  // namespace kforge::test::eval_tasks
