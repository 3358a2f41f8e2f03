// Real FSDP jobs (dp_shard > 1) through `kforge launch` on 127.0.0.1: a bit-exact 2-rank resume,
// and a killed 4-rank FSDP job that resumes on 2 ranks and keeps learning (parity with one rank:
// launch_test.cpp and launch_four_ranks_test.cpp).
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <sys/wait.h>

#include <csignal>

#include "checkpoint/checkpoint_manager.h"
#include "support/launch_job.h"
#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {
TEST(Fsdp, ResumingAnFsdpRunOnTwoRanksReproducesTheStraightRunBitExactly) {
  const std::vector<std::string> common = {"--scheduler.name=constant", "--distributed.dp_shard=2"};
  TrainFixture straight, split;
  auto args = common;
  args.push_back("--train.max_steps=20");
  launch(straight, 2, args);
  args.back() = "--train.max_steps=10";
  launch(split, 2, args);
  args.back() = "--train.max_steps=20";
  launch(split, 2, args);  // resumes from step 10 in the same directory
  const auto a = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_20");
  const auto b = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_20");
  ASSERT_EQ(a.model.size(), b.model.size());
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
  for (const auto& [name, t] : a.optimizer) EXPECT_TRUE(at::equal(t, b.optimizer.at(name))) << name;
  const auto la = metric(straight, "train/loss"), lb = metric(split, "train/loss");
  for (int64_t step = 1; step <= 20; ++step) EXPECT_EQ(la.at(step), lb.at(step)) << "step " << step;
}

// The "done when", on the test fixture: 4-rank FSDP trains and checkpoints, a worker is
// killed, and the job resumes on 2 ranks (2 shards) and keeps learning.
TEST(Fsdp, KilledFourRankFsdpJobResumesOnTwoRanksAndKeepsLearning) {
  TrainFixture fx;
  std::string output;
  const int status =
      launch_and_kill_after_checkpoint(fx, 4,
                                       {"--train.max_steps=2000", "--checkpoint.interval=5", "--train.batch_size=2",
                                        "--distributed.dp_shard=4", "--eval.enabled=false"},
                                       2, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL) << output;
  EXPECT_NE(output.find("the job failed: rank 2 exited with code 137"), std::string::npos) << output;
  const auto saved = checkpoint::CheckpointManager(fx.checkpoint_dir, 0, nullptr).load_newest([](const std::string& m) {
    ADD_FAILURE() << m;
  });
  ASSERT_TRUE(saved.has_value());
  const int64_t from = saved->step;
  ASSERT_GE(from, 5);
  const auto before = metric(fx, "train/loss");
  std::string resumed;
  ASSERT_EQ(launch(fx, 2,
                   {fmt::format("--train.max_steps={}", from + 10), "--train.batch_size=4", "--distributed.dp_shard=2",
                    "--eval.enabled=false"},
                   &resumed),
            0)
      << resumed;
  EXPECT_NE(resumed.find(fmt::format("resumed from step {}", from)), std::string::npos) << resumed;
  const auto after = metric(fx, "train/loss");
  ASSERT_TRUE(after.count(from + 10)) << resumed;
  EXPECT_LT(after.at(from + 10), before.at(1)) << "no progress since the first step";
  EXPECT_LT(after.at(from + 10), after.at(from + 1)) << "no progress after the resume";
}

}  // namespace
}  // namespace kforge::test
