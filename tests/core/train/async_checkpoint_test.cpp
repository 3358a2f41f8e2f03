// checkpoint.async_mode = "async": the step loop stages a copy and a writer thread saves it. A run
// resumed from asynchronous saves matches a synchronous run bit for bit (1 and 2 ranks); a process
// killed mid-shard resumes from the previous complete step; SIGTERM with a save in flight drains
// it and exits 75; a failing write fails the run naming the file and the error.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

const std::string kAsync = "--checkpoint.async_mode=async";

// `kforge run` of the fixture's config with `env` set and `overrides`; returns its exit status
// (-1: killed by a signal) and output.
int run_kforge(const TrainFixture& fx, const std::string& env, const std::vector<std::string>& overrides,
               std::string& output) {
  const fs::path config = fx.root / "run.toml";
  std::ofstream(config) << fx.toml;
  std::string command =
      fmt::format("{} {} run {} --plugin-dir {}", env, KFORGE_BIN, config.string(), KFORGE_PLUGIN_DIR);
  for (const auto& o : overrides) command += " " + o;
  return run_command(command, &output);
}

void expect_same_tensors(const checkpoint::Snapshot& a, const checkpoint::Snapshot& b) {
  ASSERT_EQ(a.model.size(), b.model.size());
  ASSERT_EQ(a.optimizer.size(), b.optimizer.size());
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
  for (const auto& [name, t] : a.optimizer) EXPECT_TRUE(at::equal(t, b.optimizer.at(name))) << name;
}

TEST(AsyncCheckpoint, ResumingFromAsyncSavesReproducesASyncRunBitExactly) {
  TrainFixture straight, split;
  auto sync_hook = std::make_shared<RecordingHook>();
  straight.run({"--train.max_steps=20"}, {sync_hook});
  auto first = std::make_shared<RecordingHook>(), second = std::make_shared<RecordingHook>();
  first->stop_at = 10;  // the same schedule as the straight run (max_steps 20)
  split.run({"--train.max_steps=20", kAsync}, {first});
  EXPECT_EQ(fs::read_symlink(split.checkpoint_dir / "latest"), fs::path("step_10"));
  EXPECT_NE(std::find(first->events.begin(), first->events.end(), "save 10"), first->events.end());
  const auto resumed = split.run({"--train.max_steps=20", kAsync}, {second});
  EXPECT_EQ(resumed.resumed_from, 10);
  for (int64_t step = 11; step <= 20; ++step) {
    ASSERT_TRUE(second->losses.count(step)) << "step " << step;
    EXPECT_EQ(second->losses.at(step), sync_hook->losses.at(step)) << "step " << step;
  }
  expect_same_tensors(checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_20"),
                      checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_20"));
}

TEST(AsyncCheckpoint, TwoRankAsyncResumeReproducesATwoRankSyncRunBitExactly) {
  TrainFixture straight, split;
  launch(straight, 2, {"--scheduler.name=constant", "--train.max_steps=20"});
  launch(split, 2, {"--scheduler.name=constant", "--train.max_steps=10", kAsync});
  launch(split, 2, {"--scheduler.name=constant", "--train.max_steps=20", kAsync});
  const auto la = metric(straight, "train/loss"), lb = metric(split, "train/loss");
  for (int64_t step = 1; step <= 20; ++step) {
    ASSERT_TRUE(la.count(step) && lb.count(step)) << "step " << step;
    EXPECT_EQ(la.at(step), lb.at(step)) << "step " << step;
  }
  expect_same_tensors(checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_20"),
                      checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_20"));
}

// The second save (step 10) is killed halfway through its shard: `latest` stays at step 5, the
// half-written directory is never loaded, and the next run resumes from step 5.
TEST(AsyncCheckpoint, AProcessKilledMidShardResumesFromThePreviousCompleteStep) {
  TrainFixture fx;
  std::string killed;
  const int status =
      run_kforge(fx, "KFORGE_FAULT=checkpoint.shard_partial@2", {"--train.max_steps=20", kAsync}, killed);
  EXPECT_NE(status, 0) << killed;
  EXPECT_NE(status, 75) << killed;
  EXPECT_EQ(killed.find("checkpoint saved: " + (fx.checkpoint_dir / "step_10").string()), std::string::npos) << killed;
  EXPECT_EQ(fs::read_symlink(fx.checkpoint_dir / "latest"), fs::path("step_5")) << killed;
  EXPECT_FALSE(fs::exists(fx.checkpoint_dir / "step_10")) << killed;
  std::string resumed;
  ASSERT_EQ(run_kforge(fx, "", {"--train.max_steps=12", kAsync}, resumed), 0) << resumed;
  EXPECT_NE(resumed.find("resumed from step 5"), std::string::npos) << resumed;
  EXPECT_EQ(fs::read_symlink(fx.checkpoint_dir / "latest"), fs::path("step_12"));
}

// The writer thread itself raises SIGTERM halfway through the step-5 shard, so the signal arrives
// while that save is in flight: the run finishes it, saves the step it stopped at, and exits 75.
TEST(AsyncCheckpoint, SigtermWithASaveInFlightDrainsItAndExits75WithACompleteCheckpoint) {
  TrainFixture fx;
  std::string output;
  const int status =
      run_kforge(fx, "KFORGE_FAULT=checkpoint.shard_partial:TERM", {"--train.max_steps=2000", kAsync}, output);
  EXPECT_EQ(status, 75) << output;
  EXPECT_NE(output.find("checkpoint saved: " + (fx.checkpoint_dir / "step_5").string()), std::string::npos) << output;
  const auto saved = checkpoint::CheckpointManager(fx.checkpoint_dir, 0, nullptr).load_newest([](const std::string& m) {
    ADD_FAILURE() << m;
  });
  ASSERT_TRUE(saved.has_value()) << output;
  EXPECT_GE(saved->step, 5);
  EXPECT_LT(saved->step, 2000);
  EXPECT_EQ(fs::read_symlink(fx.checkpoint_dir / "latest"), fs::path(fmt::format("step_{}", saved->step)));
  EXPECT_NE(output.find(fmt::format("checkpoint saved: {}",
                                    (fx.checkpoint_dir / fs::path(fmt::format("step_{}", saved->step))).string())),
            std::string::npos)
      << output;
}

// A file-size limit makes write(2) fail with EFBIG inside the shard: the run fails naming the
// shard and strerror, and leaves no `latest` behind (synchronous and asynchronous alike).
class FailingWrite : public ::testing::TestWithParam<const char*> {};

TEST_P(FailingWrite, FailsTheRunNamingTheShardAndTheErrorAndLeavesNoLatest) {
  TrainFixture fx;
  std::string output;
  const int status =
      run_kforge(fx, "ulimit -f 32 && trap '' XFSZ &&",
                 {"--train.max_steps=20", fmt::format("--checkpoint.async_mode={}", GetParam())}, output);
  EXPECT_EQ(status, 1) << output;
  EXPECT_NE(output.find("shard-00000-of-00001.safetensors: File too large"), std::string::npos) << output;
  EXPECT_NE(output.find("checkpoint of step 5 failed (writing the shards)"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(fx.checkpoint_dir / "latest")) << output;
  EXPECT_FALSE(fs::exists(fx.checkpoint_dir / "step_5")) << output;
}

INSTANTIATE_TEST_SUITE_P(Modes, FailingWrite, ::testing::Values("disabled", "async"));

}  // namespace
}  // namespace kforge::test
