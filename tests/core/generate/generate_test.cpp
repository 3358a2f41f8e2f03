// generate(): greedy equals a reference argmax loop over forward(), top-k 1 is greedy, EOS, limits, modes.
#include <gtest/gtest.h>

#include "generate/generate.h"
#include "core/generate/generate_test_util.h"
#include "kforge/sdk/error.h"

namespace kforge::test::gen {
namespace {

using generate::GenerateOptions;

/// Greedy continuation by re-running the full forward each step (no cache).
std::vector<std::vector<int64_t>> reference_greedy(sdk::Model& model, std::vector<std::vector<int64_t>> rows, int n) {
  at::NoGradGuard no_grad;
  for (int step = 0; step < n; ++step) {
    at::Tensor tokens = at::empty({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, at::kLong);
    for (size_t r = 0; r < rows.size(); ++r) std::copy(rows[r].begin(), rows[r].end(), tokens[r].data_ptr<int64_t>());
    const at::Tensor next = model.forward(tokens).select(1, -1).argmax(-1);
    for (size_t r = 0; r < rows.size(); ++r) rows[r].push_back(next[r].item<int64_t>());
  }
  return rows;
}

GenerateOptions greedy(int n) {
  GenerateOptions o;
  o.max_new_tokens = n;
  o.temperature = 0;
  return o;
}

TEST(Generate, GreedyIsDeterministicAndMatchesUncachedArgmax) {
  auto model = tiny_model(2);
  model->eval();
  const auto p = prompts(3, 6);
  const auto a = generate::generate(*model, p, greedy(10));
  EXPECT_EQ(a, generate::generate(*model, p, greedy(10)));
  EXPECT_EQ(a, reference_greedy(*model, p, 10));
  ASSERT_EQ(a[0].size(), 16u);
}

TEST(Generate, TopKOneEqualsGreedy) {
  auto model = tiny_model(2);
  GenerateOptions o = greedy(8);
  o.temperature = 0.9;
  o.top_k = 1;
  o.seed = 5;
  EXPECT_EQ(generate::generate(*model, prompts(2, 5), o), generate::generate(*model, prompts(2, 5), greedy(8)));
}

TEST(Generate, SampledRunsRepeatWithTheSeedAndDoNotTouchTheGlobalRng) {
  auto model = tiny_model(2);
  GenerateOptions o = greedy(12);
  o.temperature = 1.0;
  o.seed = 11;
  at::manual_seed(0);
  const auto a = generate::generate(*model, prompts(2, 4), o);
  const at::Tensor after_a = at::rand({1});
  at::manual_seed(0);
  EXPECT_EQ(a, generate::generate(*model, prompts(2, 4), o));
  EXPECT_TRUE(at::rand({1}).equal(after_a));
}

TEST(Generate, StopsWhenAllRowsEmittedEos) {
  auto model = tiny_model(2);
  const auto p = prompts(1, 5);
  const auto free_run = generate::generate(*model, {p[0], p[0]}, greedy(10));
  GenerateOptions o = greedy(10);
  o.eos_id = free_run[0][5 + 2];  // the third generated token
  const auto out = generate::generate(*model, {p[0], p[0]}, o);
  // Stops right after the first occurrence of that token (which may come earlier than position 2).
  const auto first = std::find(free_run[0].begin() + 5, free_run[0].end(), o.eos_id) - free_run[0].begin();
  ASSERT_EQ(out[0].size(), static_cast<size_t>(first + 1));
  EXPECT_EQ(out[1], out[0]);
  EXPECT_EQ(out[0].back(), o.eos_id);
}

TEST(Generate, FinishedRowsKeepGeneratingUntilAllAreDone) {
  auto model = tiny_model(2);
  // Needs a token row 0 emits but row 1 never does: row 0 finishes, generation continues to the
  // limit. Which prompts give one depends on the CPU's rounding of the argmax, so try a few.
  for (int salt = 0; salt < 8; ++salt) {
    const auto p = prompts(2, 5, salt);
    const auto free_run = generate::generate(*model, p, greedy(10));
    for (size_t i = 5; i < free_run[0].size(); ++i) {
      const int64_t t = free_run[0][i];
      if (std::find(free_run[1].begin() + 5, free_run[1].end(), t) != free_run[1].end()) continue;
      GenerateOptions o = greedy(10);
      o.eos_id = t;
      EXPECT_EQ(generate::generate(*model, p, o), free_run) << "prompt salt " << salt;
      return;
    }
  }
  FAIL() << "for 8 prompt sets, every token of row 0 also appears in row 1: nothing to test";
}

TEST(Generate, RefusesPromptPlusNewTokensBeyondMaxSeqLen) {
  auto model = tiny_model(2);
  try {
    generate::generate(*model, prompts(1, 30), greedy(3));
    FAIL() << "expected a ConfigError";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("max_seq_len = 32"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(generate::generate(*model, prompts(1, 29), greedy(3)));
}

TEST(Generate, RefusesPromptsOfDifferentLengths) {
  auto model = tiny_model(2);
  EXPECT_THROW(generate::generate(*model, {{1, 2, 3}, {1, 2}}, greedy(2)), sdk::Error);
  EXPECT_THROW(generate::generate(*model, {{}}, greedy(2)), sdk::Error);
}

TEST(Generate, RestoresTrainingModeAndRecordsNoGradients) {
  auto model = tiny_model(2);
  model->train();
  const auto out = generate::generate(*model, prompts(1, 4), greedy(3));
  EXPECT_TRUE(model->is_training());
  model->eval();
  generate::generate(*model, prompts(1, 4), greedy(3));
  EXPECT_FALSE(model->is_training());
  for (const auto& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
}

}  // namespace
}  // namespace kforge::test::gen
