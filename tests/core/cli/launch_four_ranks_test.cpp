// Real 4-process jobs through `kforge launch` on 127.0.0.1: 4-rank data parallel, FSDP and 2 x 2
// HSDP parity with one rank, 4 -> 2 and 4 -> 1 rank reshards (DP and FSDP checkpoints), and the
// per-step NaN agreement between processes (a test plugin makes one rank's loss NaN at one step).
// Every job uses the fixture's tiny model and train.num_threads = 1; the global batch is 8 samples
// of 16 tokens, so 20 steps read 160 of the corpus's 352 windows of 17 tokens (88 per rank on 4
// ranks, 44 batches of 2): all within the first epoch, whose order is the same on 1, 2 or 4 ranks.
// Parity runs are 20 steps; the reshard runs cut at step 5 and continue to 10.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "support/test_host.h"
#include "support/launch_job.h"
#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

// Global batch 8 everywhere: 1 x 8, 2 x 4, 4 x 2. A constant LR so a run cut at step 5 and resumed
// follows the same schedule as a straight one.
std::vector<std::string> args(int per_rank_batch, int64_t max_steps) {
  return {"--scheduler.name=constant", fmt::format("--train.max_steps={}", max_steps),
          fmt::format("--train.batch_size={}", per_rank_batch), "--train.num_threads=1", "--eval.enabled=false"};
}

// The same, as plain data parallelism over n ranks (without it, dp_shard takes the world: FSDP).
std::vector<std::string> dp_args(int n, int per_rank_batch, int64_t max_steps) {
  auto a = args(per_rank_batch, max_steps);
  for (const auto& o : replicated_over(n)) a.push_back(o);
  return a;
}

// The same with FSDP over `shards` ranks.
std::vector<std::string> fsdp_args(int shards, int per_rank_batch, int64_t max_steps) {
  auto a = args(per_rank_batch, max_steps);
  a.push_back(fmt::format("--distributed.dp_shard={}", shards));
  return a;
}

class FourRanks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    one = new TrainFixture();
    four = new TrainFixture();
    launch(*one, 1, args(8, 20));
    launch(*four, 4, dp_args(4, 2, 20));
  }
  static void TearDownTestSuite() {
    delete one;
    delete four;
  }
  static inline TrainFixture* one = nullptr;
  static inline TrainFixture* four = nullptr;
};

TEST_F(FourRanks, FourRankDataParallelMatchesOneRankWithTheSameGlobalBatch) {
  expect_close(metric(*four, "train/loss"), metric(*one, "train/loss"), 1, 20);
  expect_close(metric(*four, "train/grad_norm"), metric(*one, "train/grad_norm"), 1, 20);
  const auto meta = read_json(four->checkpoint_dir / "step_20" / "metadata.json");
  EXPECT_EQ(meta["world_size"], 4);
  EXPECT_TRUE(meta["files"].contains("shard-00003-of-00004.safetensors"));
  EXPECT_EQ(meta["tokens_seen"], 20 * 8 * 16);
  // Four bit-identical replicas: every rank applied the same averaged gradients.
  const auto state = read_json(four->checkpoint_dir / "step_20" / "train_state.json");
  ASSERT_EQ(state["data"].size(), 4u);
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(state["data"][r]["rank"], r);
    EXPECT_EQ(state["data"][r]["replica_checksum"], state["data"][0]["replica_checksum"]) << "rank " << r;
  }
}

TEST_F(FourRanks, FourRankFsdpMatchesOneRankAndEachRankHoldsAQuarterOfTheRows) {
  TrainFixture fsdp;
  std::string output;
  ASSERT_EQ(launch(fsdp, 4, fsdp_args(4, 2, 20), &output), 0) << output;
  EXPECT_NE(output.find("[distributed] FSDP over dp_shard = 4: this rank holds"), std::string::npos) << output;
  expect_close(metric(fsdp, "train/loss"), metric(*one, "train/loss"), 1, 20);
  expect_close(metric(fsdp, "train/grad_norm"), metric(*one, "train/grad_norm"), 1, 20);
  const auto meta = read_json(fsdp.checkpoint_dir / "step_20" / "metadata.json");
  const auto& wq = meta["tensors"]["model/layers.0.attention.q_proj.weight"];
  ASSERT_EQ(wq["shards"].size(), 4u) << wq.dump();
  const int64_t rows = wq["global_shape"][0].get<int64_t>();
  for (int r = 0; r < 4; ++r) EXPECT_EQ(wq["shards"][r]["offsets"][0].get<int64_t>(), r * rows / 4) << wq.dump();
}

TEST_F(FourRanks, TwoByTwoHsdpMatchesOneRankAndReplicasHoldIdenticalShards) {
  TrainFixture hsdp;
  auto a = args(2, 20);
  a.push_back("--distributed.dp_replicate=2");
  a.push_back("--distributed.dp_shard=2");
  std::string output;
  ASSERT_EQ(launch(hsdp, 4, a, &output), 0) << output;
  EXPECT_NE(output.find("FSDP over dp_shard = 2 (HSDP: replicated over dp_replicate)"), std::string::npos) << output;
  expect_close(metric(hsdp, "train/loss"), metric(*one, "train/loss"), 1, 20);
  // Mesh order (dp_replicate, dp_shard): ranks 0 and 2 hold shard 0, ranks 1 and 3 shard 1.
  const auto state = read_json(hsdp.checkpoint_dir / "step_20" / "train_state.json");
  ASSERT_EQ(state["data"].size(), 4u);
  EXPECT_EQ(state["data"][2]["replica_checksum"], state["data"][0]["replica_checksum"]);
  EXPECT_EQ(state["data"][3]["replica_checksum"], state["data"][1]["replica_checksum"]);
  EXPECT_NE(state["data"][1]["replica_checksum"], state["data"][0]["replica_checksum"]);
}

// FSDP checkpoint written by 4 ranks, resumed with 2 shards and on one rank: the row slices of
// parameters and optimizer state are assembled and cut again.
TEST_F(FourRanks, AFourRankFsdpCheckpointResumesOnTwoShardsAndOnOneRank) {
  TrainFixture first_half, on_two, on_one;
  launch(first_half, 4, fsdp_args(4, 2, 5));
  for (TrainFixture* fx : {&on_two, &on_one}) {
    fs::copy(first_half.checkpoint_dir, fx->checkpoint_dir, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  std::string output;
  ASSERT_EQ(launch(on_two, 2, fsdp_args(2, 4, 10), &output), 0) << output;
  EXPECT_NE(output.find("resumed from step 5"), std::string::npos) << output;
  expect_close(metric(on_two, "train/loss"), metric(*one, "train/loss"), 6, 10);
  launch(on_one, 1, args(8, 10));
  expect_close(metric(on_one, "train/loss"), metric(*one, "train/loss"), 6, 10);
}

TEST_F(FourRanks, AFourRankCheckpointAtStepFiveResumesOnTwoRanksAndTracksTheOneRankRun) {
  TrainFixture first_half, resumed;
  launch(first_half, 4, dp_args(4, 2, 5));
  ASSERT_EQ(read_json(first_half.checkpoint_dir / "step_5" / "metadata.json")["world_size"], 4);
  fs::copy(first_half.checkpoint_dir, resumed.checkpoint_dir,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::string output;
  ASSERT_EQ(launch(resumed, 2, dp_args(2, 4, 10), &output), 0) << output;
  EXPECT_NE(output.find("resumed from step 5"), std::string::npos) << output;
  expect_close(metric(resumed, "train/loss"), metric(*one, "train/loss"), 6, 10);
  const auto state = read_json(resumed.checkpoint_dir / "step_10" / "train_state.json");
  ASSERT_EQ(state["data"].size(), 2u);
  EXPECT_EQ(state["data"][1]["replica_checksum"], state["data"][0]["replica_checksum"]);
}

// Rank 1's loss is NaN at step 3 (its gradient is finite): every rank must skip that optimizer step,
// or rank 0 would step alone and the replicas would diverge.
TEST(LaunchNan, ANanLossOnOneRankMakesEveryRankSkipThatStep) {
  TrainFixture fx;
  auto a = dp_args(2, 4, 6);
  a.insert(a.end(), {"--plugin-dir", KFORGE_NAN_LOSS_DIR, "--train.loss_fn=fixture_nan_on_rank",
                     "--train.fixture_nan_rank=1", "--train.fixture_nan_step=3"});
  std::string output;
  ASSERT_EQ(launch(fx, 2, a, &output), 0) << output;
  // Each process logs the skip: rank 0 (shown by the launcher) with its own finite loss replaced.
  const std::string skipped = "step 3: loss nan / grad norm nan is not finite: optimizer step skipped (1 in a row";
  EXPECT_NE(output.find(skipped), std::string::npos) << output;
  std::stringstream rank1;
  rank1 << std::ifstream(fx.root / "logs" / "rank_1.log").rdbuf();
  EXPECT_NE(rank1.str().find(skipped), std::string::npos) << rank1.str();
  EXPECT_EQ(output.find("step 2: loss nan"), std::string::npos) << output;
  EXPECT_EQ(output.find("step 4: loss nan"), std::string::npos) << output;
  const auto losses = metric(fx, "train/loss");
  EXPECT_EQ(losses.count(3), 0u);
  for (int64_t step : {1, 2, 4, 5, 6}) EXPECT_TRUE(losses.count(step)) << "step " << step;
  const auto state = read_json(fx.checkpoint_dir / "step_6" / "train_state.json");
  ASSERT_EQ(state["data"].size(), 2u);
  EXPECT_EQ(state["data"][1]["replica_checksum"], state["data"][0]["replica_checksum"]);
  EXPECT_EQ(state["nan"]["total"], 1);
  EXPECT_EQ(state["nan"]["consecutive"], 0);
}

}  // namespace
}  // namespace kforge::test
