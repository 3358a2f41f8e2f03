// Real FSDP jobs (dp_shard > 1) through `kforge launch` on 127.0.0.1: 2-rank parity with one rank
// under gradient accumulation and eval, a bit-exact 2-rank resume, and a killed 4-rank FSDP job
// that resumes on 2 ranks and keeps learning.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <sys/wait.h>

#include <csignal>

#include "checkpoint/checkpoint_manager.h"
#include "launch_job.h"
#include "train/train_fixture.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

TEST(Fsdp, TwoRankFsdpMatchesOneRankAndWritesRowSlicesOfParametersAndOptimizerState) {
  const std::vector<std::string> common = {"--train.max_steps=10", "--eval.enabled=true", "--train.grad_accum_steps=2"};
  TrainFixture one, two;
  auto args = common;
  args.push_back("--train.batch_size=8");
  launch(one, 1, args);
  args.back() = "--train.batch_size=4";
  args.push_back("--distributed.dp_shard=2");
  launch(two, 2, args);
  expect_close(metric(two, "train/loss"), metric(one, "train/loss"), 1, 10);
  expect_close(metric(two, "train/grad_norm"), metric(one, "train/grad_norm"), 1, 10);
  expect_close(metric(two, "eval/loss"), metric(one, "eval/loss"), 5, 5);
  const auto meta = read_json(two.checkpoint_dir / "step_10" / "metadata.json");
  for (const std::string key : {"model/token_embedding.embedding.weight", "optimizer/token_embedding.embedding.weight.exp_avg"}) {
    ASSERT_TRUE(meta["tensors"].contains(key)) << key;
    ASSERT_EQ(meta["tensors"][key]["shards"].size(), 2u) << meta["tensors"][key].dump();
    EXPECT_EQ(meta["tensors"][key]["shards"][1]["file"], "shard-00001-of-00002.safetensors");
  }
  // Loaded whole again, the FSDP checkpoint has the one-rank run's tensors, shapes and names.
  const auto a = checkpoint::CheckpointManager::load(one.checkpoint_dir / "step_10");
  const auto b = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_10");
  ASSERT_EQ(a.model.size(), b.model.size());
  for (const auto& [name, t] : a.model) {
    ASSERT_TRUE(b.model.count(name)) << name;
    EXPECT_TRUE(at::allclose(b.model.at(name), t, 1e-4, 1e-5)) << name;
  }
  ASSERT_EQ(a.optimizer.size(), b.optimizer.size());
  for (const auto& [name, t] : a.optimizer) EXPECT_EQ(b.optimizer.at(name).sizes(), t.sizes()) << name;
}

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
  const int status = launch_and_kill_after_checkpoint(
      fx, 4,
      {"--train.max_steps=100000", "--checkpoint.interval=5", "--train.batch_size=2", "--distributed.dp_shard=4",
       "--eval.enabled=false"},
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
