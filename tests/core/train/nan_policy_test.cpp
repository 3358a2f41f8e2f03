// NaN/Inf losses never step the optimizer; too many in a row stop the run without a checkpoint.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

train::StepFn nan_on_steps(std::set<int64_t> bad_steps, std::map<int64_t, at::Tensor>* weights_before) {
  return [bad_steps, weights_before](train::Trainer& t, const std::vector<data::Batch>& batches) {
    const int64_t step = t.step() + 1;
    (*weights_before)[step] = t.parameters().front().tensor.detach().clone();
    train::StepResult r = train::standard_step(t, batches);
    if (bad_steps.count(step)) r.loss = std::numeric_limits<double>::quiet_NaN();
    return r;
  };
}

TEST(NanPolicy, ANonFiniteLossSkipsTheUpdateAndTrainingContinues) {
  TrainFixture fx;
  std::map<int64_t, at::Tensor> before;
  auto hook = std::make_shared<RecordingHook>();
  const auto result = fx.run({"--train.max_steps=6"}, {hook}, nan_on_steps({3}, &before));
  EXPECT_EQ(result.outcome, train::Outcome::Completed);
  EXPECT_EQ(result.step, 6);
  // Step 3's update was skipped: the weights entering step 4 equal those entering step 3.
  EXPECT_TRUE(at::equal(before.at(3), before.at(4)));
  EXPECT_FALSE(at::equal(before.at(2), before.at(3)));
  EXPECT_EQ(hook->losses.count(3), 0u);  // no train metrics or hooks for the skipped step
  // The metrics record the skip itself, at its step, instead of train metrics.
  std::vector<nlohmann::json> skips;
  std::ifstream in(fx.checkpoint_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_FALSE(j.contains("train/loss") && j.at("step") == 3) << line;
    if (j.contains("train/nan_skipped")) skips.push_back(j);
  }
  ASSERT_EQ(skips.size(), 1u);
  EXPECT_EQ(skips[0].at("step"), 3);
  EXPECT_EQ(skips[0].at("train/nan_total"), 1.0);
}

TEST(NanPolicy, StopsAfterTheConfiguredNumberOfConsecutiveNans) {
  TrainFixture fx;
  std::map<int64_t, at::Tensor> before;
  const auto result = fx.run({"--train.max_steps=20", "--train.nan_max_consecutive=3", "--checkpoint.interval=1000"},
                             {}, nan_on_steps({4, 5, 6, 7}, &before));
  EXPECT_EQ(result.outcome, train::Outcome::TooManyNans);
  EXPECT_EQ(result.step, 6);
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "step_6"));
  EXPECT_TRUE(at::equal(before.at(4), before.at(6)));
}

TEST(NanPolicy, ConsecutiveCountResetsAfterAGoodStep) {
  TrainFixture fx;
  std::map<int64_t, at::Tensor> before;
  const auto result =
      fx.run({"--train.max_steps=8", "--train.nan_max_consecutive=2"}, {}, nan_on_steps({2, 4, 6}, &before));
  EXPECT_EQ(result.outcome, train::Outcome::Completed);
  EXPECT_EQ(result.step, 8);
}

}  // namespace
}  // namespace kforge::test
