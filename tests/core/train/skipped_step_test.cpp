// A step whose global batch trains no token (every label -100) is skipped: no optimizer or scheduler step and no step
// counted, the data moves on, the skip is counted across resumes, a rank alone without a trained token does not skip,
// 100 skips in a row stop the run (exit 2), and tokens/s counts trained tokens.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "data/data_error.h"
#include "data/npy_writer.h"
#include "data/sampler.h"
#include "support/launch_job.h"
#include "train/step.h"

namespace kforge::test {
namespace {

constexpr int kEos = 5;             // the corpus' EOS id (metadata.json): an input EOS's label is ignored when packing
constexpr int64_t kInputs = 16;     // the fixture's seq_len: each window is 16 inputs and the last one's label
constexpr int64_t kWindows = 60;    // one epoch: 15 batches of 4 on one rank, 7 per rank on two
const std::vector<std::string> kPacked = {"--data.pack_sequences=true", "--eval.enabled=false"};

/// The fixture's data replaced by one shard of kWindows windows: tokens (i * 7) % 64 (the EOS once every 64 tokens),
/// but the windows `empty` names are all EOS, so every label of a batch made of them is -100. Returns the tokens.
std::vector<int> write_corpus(const TrainFixture& fx, const std::set<int64_t>& empty) {
  std::vector<int> tokens(static_cast<size_t>(kWindows * (kInputs + 1)));
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool all_eos = empty.count(static_cast<int64_t>(i) / (kInputs + 1)) > 0;
    tokens[i] = all_eos ? kEos : static_cast<int>((i * 7) % 64);
  }
  std::filesystem::remove(fx.data_dir / "shard_1.npy");
  data::write_npy_tokens(fx.data_dir / "shard_0.npy", data::TokenDtype::uint16, tokens);
  std::ofstream(fx.data_dir / "metadata.json")
      << fmt::format(R"({{"format": "kforge-tokens-v1", "vocab_size": 64, "eos_id": {}, "shards": {{"train": [], )"
                     R"("eval": []}}}})",
                     kEos);
  return tokens;
}

/// The fixture's data with every window all EOS: no batch trains a token.
void write_all_eos_corpus(const TrainFixture& fx) {
  std::set<int64_t> all;
  for (int64_t w = 0; w < kWindows; ++w) all.insert(w);
  write_corpus(fx, all);
}

/// The windows data-parallel rank `rank` of `world` reads for its `batch`-th batch of the first epoch (the trainer's
/// sampler over the fixture's data seed and batch size).
std::vector<int64_t> batch_windows(const TrainFixture& fx, int64_t batch, int rank = 0, int world = 1) {
  const config::JobConfig job = fx.job();
  const int64_t size = job.train.batch_size;
  const std::vector<int64_t> order =
      data::BatchSampler(kWindows, size, job.train.effective_data_seed(), rank, world).epoch_indices(0);
  return {order.begin() + batch * size, order.begin() + (batch + 1) * size};
}

/// The windows of batch `batch` on every rank of `world`.
std::set<int64_t> windows_of_batch(const TrainFixture& fx, int64_t batch, int world = 1) {
  std::set<int64_t> windows;
  for (int rank = 0; rank < world; ++rank) {
    for (const int64_t w : batch_windows(fx, batch, rank, world)) windows.insert(w);
  }
  return windows;
}

/// The labels of `windows` that train: one per input that is not an EOS.
int64_t trained_labels(const std::vector<int>& tokens, const std::set<int64_t>& windows) {
  int64_t count = 0;
  for (const int64_t w : windows) {
    for (int64_t t = 0; t < kInputs; ++t) count += tokens[static_cast<size_t>(w * (kInputs + 1) + t)] != kEos;
  }
  return count;
}

std::vector<std::string> packed(const std::vector<std::string>& more) { return with(kPacked, more); }

nlohmann::json train_state(const TrainFixture& fx, int64_t step) {
  return checkpoint::CheckpointManager::load(fx.checkpoint_dir / fmt::format("step_{}", step)).train_state;
}

TEST(SkippedStep, AStepWhoseLabelsAllIgnoreTakesNoOptimizerOrSchedulerStepAndIsCounted) {
  TrainFixture fx, plain;
  write_corpus(fx, windows_of_batch(fx, 2));
  write_corpus(plain, {});
  struct Call {
    int64_t step;
    std::vector<at::Tensor> params;
    sdk::StateDict optimizer;
  };
  std::vector<Call> calls;  // what each call of the step body found
  const train::StepFn recording = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    Call call{trainer.step(), {}, trainer.optimizer().state_dict()};
    for (auto& [name, t] : call.optimizer) t = t.clone();
    for (const auto& p : trainer.parameters()) call.params.push_back(p.tensor.detach().clone());
    calls.push_back(std::move(call));
    return train::standard_step(trainer, batches);
  };
  EXPECT_EQ(fx.run(packed({"--train.max_steps=4"}), {}, recording).step, 4);
  plain.run(packed({"--train.max_steps=4"}), {});
  // Batch 2 came to step 2 and was skipped: the next batch trains step 2 again, from the same state.
  ASSERT_EQ(calls.size(), 5u);
  const std::vector<int64_t> steps = {calls[0].step, calls[1].step, calls[2].step, calls[3].step, calls[4].step};
  EXPECT_EQ(steps, (std::vector<int64_t>{0, 1, 2, 2, 3}));
  ASSERT_EQ(calls[3].params.size(), calls[2].params.size());
  for (size_t i = 0; i < calls[2].params.size(); ++i) {
    EXPECT_TRUE(at::equal(calls[3].params[i], calls[2].params[i])) << "parameter " << i;
  }
  ASSERT_EQ(calls[3].optimizer.size(), calls[2].optimizer.size());
  for (const auto& [name, t] : calls[2].optimizer) EXPECT_TRUE(at::equal(calls[3].optimizer.at(name), t)) << name;
  EXPECT_FALSE(at::equal(calls[2].params.front(), calls[1].params.front())) << "not vacuous: a trained step moves it";
  // The scheduler did not advance: every step's learning rate is the run's without the empty batch.
  EXPECT_EQ(metric(fx, "train/lr"), metric(plain, "train/lr"));
  EXPECT_EQ(metric(fx, "train/skipped_steps"), (std::map<int64_t, double>{{3, 1.0}}));
  EXPECT_EQ(train_state(fx, 4).at("skipped_steps"), 1);
  EXPECT_EQ(train_state(fx, 4).at("data").at(0).at("batches_yielded"), 5) << "the data moved past the empty batch";
}

TEST(SkippedStep, ARunResumedAfterASkippedStepEqualsTheUninterruptedRun) {
  TrainFixture whole, split;
  const std::set<int64_t> empty = [&] {  // batch 2 before the checkpoint of step 5, batch 8 after it
    std::set<int64_t> windows = windows_of_batch(whole, 2);
    for (const int64_t w : windows_of_batch(whole, 8)) windows.insert(w);
    return windows;
  }();
  write_corpus(whole, empty);
  write_corpus(split, empty);
  whole.run(packed({"--train.max_steps=10"}), {});
  split.run(packed({"--train.max_steps=5"}), {});
  ASSERT_EQ(split.run(packed({"--train.max_steps=10"}), {}).resumed_from, 5);
  const auto losses = metric(whole, "train/loss");
  ASSERT_EQ(losses.size(), 10u);
  EXPECT_EQ(metric(split, "train/loss"), losses);
  EXPECT_EQ(metric(split, "train/skipped_steps"), (std::map<int64_t, double>{{3, 1.0}, {8, 2.0}}));
  EXPECT_EQ(metric(whole, "train/skipped_steps"), metric(split, "train/skipped_steps"));
  const auto a = checkpoint::CheckpointManager::load(whole.checkpoint_dir / "step_10");
  const auto b = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_10");
  EXPECT_EQ(a.train_state.at("skipped_steps"), 2);
  EXPECT_EQ(b.train_state.at("skipped_steps"), 2);
  EXPECT_EQ(a.train_state.at("data"), b.train_state.at("data"));
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
  for (const auto& [name, t] : a.optimizer) EXPECT_TRUE(at::equal(t, b.optimizer.at(name))) << name;
}

TEST(SkippedStep, TwoRanksSkipOnlyWhenNeitherHasATrainedToken) {
  TrainFixture fx;
  std::set<int64_t> empty = windows_of_batch(fx, 3, 2);  // both ranks' batch 3
  for (const int64_t w : batch_windows(fx, 1, 0, 2)) empty.insert(w);  // rank 0's batch 1 only
  const std::vector<int> tokens = write_corpus(fx, empty);
  launch(fx, 2, packed(with(replicated_over(2), {"--train.max_steps=4"})));
  EXPECT_EQ(metric(fx, "train/skipped_steps"), (std::map<int64_t, double>{{4, 1.0}}));
  const nlohmann::json state = train_state(fx, 4);
  EXPECT_EQ(state.at("skipped_steps"), 1);
  for (const auto& position : state.at("data")) EXPECT_EQ(position.at("batches_yielded"), 5) << position.dump();
  // Step 2 trained on rank 1's batch alone: its tokens/s counts those tokens.
  const double counted = metric(fx, "train/tokens_per_sec").at(2) * metric(fx, "train/step_time_sec").at(2);
  const auto expected = static_cast<double>(trained_labels(tokens, windows_of_batch(fx, 1, 2)));
  EXPECT_NEAR(counted, expected, expected * 2 * DBL_EPSILON);  // a division and a product, each rounded once
}

TEST(SkippedStep, TokensPerSecondCountsTheTrainedTokensOfTheStep) {
  TrainFixture fx;
  const std::vector<int> tokens = write_corpus(fx, {});
  fx.run(packed({"--train.max_steps=4"}), {});
  const auto per_sec = metric(fx, "train/tokens_per_sec"), seconds = metric(fx, "train/step_time_sec");
  ASSERT_EQ(per_sec.size(), 4u);
  bool some_ignored = false;
  for (int64_t step = 1; step <= 4; ++step) {
    const auto expected = static_cast<double>(trained_labels(tokens, windows_of_batch(fx, step - 1)));
    some_ignored = some_ignored || expected < 4 * kInputs;
    EXPECT_NEAR(per_sec.at(step) * seconds.at(step), expected, expected * 2 * DBL_EPSILON) << "step " << step;
  }
  EXPECT_TRUE(some_ignored) << "not vacuous: some batch holds an EOS input";
}

TEST(SkippedStep, OneHundredSkippedStepsInARowStopTheRunWithExitCode2) {
  TrainFixture fx;
  write_all_eos_corpus(fx);
  int64_t calls = 0;
  const train::StepFn counting = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    ++calls;
    return train::standard_step(trainer, batches);
  };
  try {
    fx.run(packed({"--train.max_steps=4"}), {}, counting);
    ADD_FAILURE() << "an all-EOS corpus trained";
  } catch (const data::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("100 steps in a row before step 1 trained no token"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(calls, train::kMaxConsecutiveSkippedSteps);
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "latest")) << "nothing trained, nothing saved";
  std::string output;
  EXPECT_EQ(launch(fx, 1, packed({"--train.max_steps=4"}), &output), 2) << output;
}

// A shutdown signal while steps are skipped ends the run as preempted at the next skip, as at a trained step's end,
// instead of after the 100 skips that stop the run.
TEST(SkippedStep, ASignalWhileStepsAreSkippedEndsTheRunAsPreemptedAtTheNextSkip) {
  TrainFixture fx;
  write_all_eos_corpus(fx);
  int64_t calls = 0;
  const train::StepFn signalling = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    if (++calls == 3) std::raise(SIGTERM);  // the run's handlers record it
    return train::standard_step(trainer, batches);
  };
  const train::TrainingResult result = fx.run(packed({"--train.max_steps=4"}), {}, signalling);
  EXPECT_EQ(result.outcome, train::Outcome::Preempted);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(result.step, 0);
}

}  // namespace
}  // namespace kforge::test
