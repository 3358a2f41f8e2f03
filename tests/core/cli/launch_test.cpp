// Real multi-process jobs through `kforge launch` on 127.0.0.1 (a fresh port per job): data
// parallel and FSDP parity with one rank, exact resume, elastic resume, failure handling, mesh
// errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "launch/heap_huge_pages.h"
#include "support/launch_job.h"
#include "support/max_abs_diff.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

// One rank with batch 8 against two with batch 4: the same global batch, with accumulation and eval.
class TwoRanks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    one = new TrainFixture();
    launch(*one, 1, args(8));
  }
  static void TearDownTestSuite() { delete one; }
  static std::vector<std::string> args(int batch_size) {
    return {"--train.max_steps=20", "--eval.enabled=true", "--train.grad_accum_steps=2",
            fmt::format("--train.batch_size={}", batch_size)};
  }
  static void expect_parity(const TrainFixture& two) {
    expect_close(metric(two, "train/loss"), metric(*one, "train/loss"), 1, 20);
    expect_close(metric(two, "train/grad_norm"), metric(*one, "train/grad_norm"), 1, 20);
    for (const int64_t step : {5, 10, 15, 20}) {
      expect_close(metric(two, "eval/loss"), metric(*one, "eval/loss"), step, step);
    }
  }
  static inline TrainFixture* one = nullptr;
};

TEST_F(TwoRanks, DataParallelMatchesOneRankWithTheSameGlobalBatch) {
  TrainFixture two;
  auto a = args(4);
  for (const auto& o : replicated_over(2)) a.push_back(o);
  std::string output;
  ASSERT_EQ(launch(two, 2, a, &output), 0) << output;
  EXPECT_NE(output.find("gradient all-reduce overlapped with the backward for 2 of 2 blocks"), std::string::npos)
      << output;
  expect_parity(two);
  const auto meta = nlohmann::json::parse(std::ifstream(two.checkpoint_dir / "step_20" / "metadata.json"));
  EXPECT_EQ(meta["world_size"], 2);
  EXPECT_TRUE(meta["files"].contains("shard-00001-of-00002.safetensors"));
  EXPECT_EQ(meta["tokens_seen"], 20 * 8 * 2 * 16);
  // Bit-identical replicas after 20 steps from the same init: every rank applied the same averaged gradients.
  const auto state = nlohmann::json::parse(std::ifstream(two.checkpoint_dir / "step_20" / "train_state.json"));
  ASSERT_EQ(state["data"].size(), 2u);
  EXPECT_EQ(state["data"][0]["replica_checksum"], state["data"][1]["replica_checksum"]);
  EXPECT_EQ(state["data"][1]["rank"], 1);
  // The launcher's workers start with the heap's huge pages the front-end asks for (launch/heap_huge_pages.h).
  std::ifstream runs(two.checkpoint_dir / "runs.jsonl");
  std::string start;
  ASSERT_TRUE(std::getline(runs, start));
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  EXPECT_EQ(nlohmann::json::parse(start).at("environment").at("glibc_tunables"),
            launch::with_heap_huge_pages(tunables ? tunables : ""));
}

TEST_F(TwoRanks, FsdpMatchesOneRankAndWritesRowSlicesOfParametersAndOptimizerState) {
  TrainFixture two;
  auto a = args(4);
  a.push_back("--distributed.dp_shard=2");
  launch(two, 2, a);
  expect_parity(two);
  const auto meta = nlohmann::json::parse(std::ifstream(two.checkpoint_dir / "step_20" / "metadata.json"));
  for (const std::string key : {"model/token_embedding.embedding.weight", "optimizer/token_embedding.embedding.weight.exp_avg"}) {
    ASSERT_TRUE(meta["tensors"].contains(key)) << key;
    ASSERT_EQ(meta["tensors"][key]["shards"].size(), 2u) << meta["tensors"][key].dump();
    EXPECT_EQ(meta["tensors"][key]["shards"][1]["file"], "shard-00001-of-00002.safetensors");
  }
  // Loaded whole again, the FSDP checkpoint has the one-rank run's tensors, shapes and names.
  const auto whole = checkpoint::CheckpointManager::load(one->checkpoint_dir / "step_20");
  const auto sharded = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_20");
  ASSERT_EQ(whole.model.size(), sharded.model.size());
  for (const auto& [name, t] : whole.model) {
    ASSERT_TRUE(sharded.model.count(name)) << name;
    EXPECT_TRUE(at::allclose(sharded.model.at(name), t, 1e-4, 1e-5)) << name;
  }
  // The optimizer state by value too, each tensor within the parameters' relative tolerance of its
  // own largest entry (exp_avg_sq is ~1e-8: an absolute tolerance would accept anything).
  ASSERT_EQ(whole.optimizer.size(), sharded.optimizer.size());
  for (const auto& [name, t] : whole.optimizer) {
    ASSERT_TRUE(sharded.optimizer.count(name)) << name;
    const at::Tensor& s = sharded.optimizer.at(name);
    ASSERT_EQ(s.sizes(), t.sizes()) << name;
    EXPECT_LE(max_abs_diff(s, t), 1e-4 * t.abs().max().item<double>()) << name;
  }
}

// 20 steps on 2 data-parallel ranks straight, and 10 + 10 with a restart, share one constant-LR
// schedule (launch_fsdp_test.cpp has the same for FSDP).
class Resume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    straight = new TrainFixture();
    split = new TrainFixture();
    launch(*straight, 2, args(20));
    launch(*split, 2, args(10));
  }
  static void TearDownTestSuite() {
    delete straight;
    delete split;
  }
  static std::vector<std::string> args(int64_t max_steps) {
    std::vector<std::string> a = {"--scheduler.name=constant", fmt::format("--train.max_steps={}", max_steps)};
    for (const auto& o : replicated_over(2)) a.push_back(o);
    return a;
  }
  static inline TrainFixture* straight = nullptr;
  static inline TrainFixture* split = nullptr;
};

TEST_F(Resume, ResumingOnTwoRanksReproducesTheStraightRunBitExactly) {
  TrainFixture resumed;
  fs::copy(split->checkpoint_dir, resumed.checkpoint_dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  launch(resumed, 2, args(20));
  const auto a = checkpoint::CheckpointManager::load(straight->checkpoint_dir / "step_20");
  const auto b = checkpoint::CheckpointManager::load(resumed.checkpoint_dir / "step_20");
  ASSERT_EQ(a.model.size(), b.model.size());
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
  for (const auto& [name, t] : a.optimizer) EXPECT_TRUE(at::equal(t, b.optimizer.at(name))) << name;
  EXPECT_EQ(b.train_state["data"], a.train_state["data"]);
  const auto la = metric(*straight, "train/loss"), lb = metric(resumed, "train/loss");
  for (int64_t step = 11; step <= 20; ++step) EXPECT_EQ(la.at(step), lb.at(step)) << "step " << step;
}

TEST_F(Resume, ATwoRankCheckpointResumesOnOneRank) {
  TrainFixture single;
  fs::copy(split->checkpoint_dir, single.checkpoint_dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  launch(single, 1, {"--scheduler.name=constant", "--train.max_steps=20", "--train.batch_size=8"});
  // Same global batch (1 x 8 = 2 x 4) and the data order re-derived from the global sample count.
  expect_close(metric(single, "train/loss"), metric(*straight, "train/loss"), 11, 20);
}

TEST(Launch, KilledWorkerStopsTheJobNamingTheRankAndTheLastCheckpointLoads) {
  TrainFixture fx;
  std::string output;
  const int status =
      launch_and_kill_after_checkpoint(fx, 2, {"--train.max_steps=2000", "--checkpoint.interval=5"}, 1, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL) << output;
  EXPECT_NE(output.find("rank 1 (pid"), std::string::npos) << output;
  EXPECT_NE(output.find("the job failed: rank 1 exited with code 137"), std::string::npos) << output;
  checkpoint::CheckpointManager manager(fx.checkpoint_dir, 0, nullptr);
  const auto snapshot = manager.load_newest([](const std::string& m) { ADD_FAILURE() << m; });
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_GE(snapshot->step, 5);
}

TEST(Launch, SigtermIsForwardedAndEveryRankSavesBeforeExiting) {
  TrainFixture fx;
  std::string output;
  // As SLURM or a user would signal the job: SIGTERM to the launcher.
  const int status =
      signal_after_checkpoint(launch_command(fx, 2, {"--train.max_steps=2000", "--checkpoint.interval=3"}),
                              "kforge launch: pid %d", SIGTERM, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 75) << output;  // kExitPreempted from every rank
  EXPECT_NE(output.find("shutdown requested (signal 15)"), std::string::npos) << output;
  const auto snapshot = checkpoint::CheckpointManager(fx.checkpoint_dir, 0, nullptr).load_newest([](const std::string& m) {
    ADD_FAILURE() << m;
  });
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_GE(snapshot->step, 3);  // the save at the signal (or the interval save it came right after)
  EXPECT_EQ(snapshot->train_state["data"].size(), 2u);
}

TEST(Launch, MeshNotMatchingTheWorldIsAConfigErrorNamingTheKeys) {
  TrainFixture fx;
  std::string output;
  EXPECT_EQ(launch(fx, 2, {"--distributed.dp_shard=3"}, &output), 2) << output;
  EXPECT_NE(output.find("dp_shard"), std::string::npos) << output;
  EXPECT_NE(output.find("world_size (2)"), std::string::npos) << output;
  EXPECT_NE(output.find("the job failed: rank"), std::string::npos) << output;
}

}  // namespace
}  // namespace kforge::test
