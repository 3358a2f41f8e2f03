// Muon under FSDP through `kforge launch` on 127.0.0.1: two processes with dp_shard = 2 gather each
// matrix and its gradient for the Newton-Schulz update and keep their rows; the run matches one
// rank with the same global batch, and a resumed two-rank run reproduces the straight one exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "checkpoint/checkpoint_manager.h"
#include "support/launch_job.h"
#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

// Tolerance of the two-shard run against one rank, relative (to the loss; to a tensor's largest
// magnitude). Each step's gradients differ by the rounding of one reordered fp32 sum (two rank means
// averaged instead of one mean over the global batch): a relative u = 2^-24. Muon's Newton-Schulz
// step p(x) = a x + b x^3 + c x^5 (a = 3.4445, b = -4.7750, c = 2.0315) keeps the singular values in
// [0, 1.203] (they start in [0, 1] after the normalisation), where its slope |p'| is below 3.97 < 4,
// so muon_ns_steps = 5 steps amplify that by less than 4^5, and the 8 training steps' perturbations
// add: 8 * 4^5 * u = 4.9e-4. Updating shards instead of whole matrices (another algorithm) departs by
// 1.3e-3 in the loss at step 3, 9e-3 at step 8, and 1e-3 to 0.4 in the weights.
const double kMuonParityTolerance = 8 * std::pow(4.0, 5) * std::ldexp(1.0, -24);

// max |a - b| relative to b's largest magnitude (0 for equal tensors, empty ones included).
double relative_difference(const at::Tensor& a, const at::Tensor& b) {
  if (b.numel() == 0) return 0;
  const at::Tensor x = a.to(at::kDouble), y = b.to(at::kDouble);
  const double diff = (x - y).abs().max().item<double>();
  return diff == 0 ? 0 : diff / y.abs().max().item<double>();
}

// Every tensor of the one-rank checkpoint is in the two-shard one, within the tolerance.
void expect_close_tensors(const checkpoint::TensorMap& one_rank, const checkpoint::TensorMap& two_shards) {
  ASSERT_EQ(one_rank.size(), two_shards.size());
  for (const auto& [name, t] : one_rank) {
    ASSERT_TRUE(two_shards.count(name)) << name;
    EXPECT_LE(relative_difference(two_shards.at(name), t), kMuonParityTolerance) << name;
  }
}

const std::vector<std::string> kMuon = {
    "--optimizer.name=muon",   "--optimizer.muon_adam_lr=3e-3", "--train.max_steps=8",
    "--checkpoint.interval=4", "--eval.enabled=false",          "--scheduler.name=constant",
};

TEST(MuonFsdp, TwoShardsMatchOneRankInLossesWeightsAndMomentum) {
  TrainFixture one, two;
  launch(one, 1, with(kMuon, {"--train.batch_size=8"}));
  std::string output;
  ASSERT_EQ(launch(two, 2, with(kMuon, {"--train.batch_size=4", "--distributed.dp_shard=2"}), &output), 0) << output;
  EXPECT_NE(output.find("[optimizer] name = \"muon\" updates whole matrices"), std::string::npos) << output;
  const auto loss_one = metric(one, "train/loss"), loss_two = metric(two, "train/loss");
  for (int64_t step = 1; step <= 8; ++step) {
    ASSERT_TRUE(loss_one.count(step) && loss_two.count(step)) << "step " << step;
    EXPECT_NEAR(loss_two.at(step), loss_one.at(step), kMuonParityTolerance * std::abs(loss_one.at(step)))
        << "step " << step;
  }
  // The two-shard checkpoint, assembled from its row slices, holds the one-rank run's tensors.
  const auto whole = checkpoint::CheckpointManager::load(one.checkpoint_dir / "step_8");
  const auto sharded = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_8");
  ASSERT_TRUE(whole.optimizer.count("layers.0.attention.q_proj.weight.momentum_buffer"));
  expect_close_tensors(whole.model, sharded.model);
  expect_close_tensors(whole.optimizer, sharded.optimizer);
}

TEST(MuonFsdp, ResumingOnTwoShardsReproducesTheStraightRunBitExactly) {
  TrainFixture straight, split;
  const auto two = with(kMuon, {"--train.batch_size=4", "--distributed.dp_shard=2"});
  launch(straight, 2, two);
  launch(split, 2, with(two, {"--train.max_steps=4"}));
  launch(split, 2, two);  // resumes from step 4 in the same directory
  const auto a = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_8");
  const auto b = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_8");
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
  ASSERT_EQ(a.optimizer.size(), b.optimizer.size());
  for (const auto& [name, t] : a.optimizer) EXPECT_TRUE(at::equal(t, b.optimizer.at(name))) << name;
  const auto la = metric(straight, "train/loss"), lb = metric(split, "train/loss");
  for (int64_t step = 1; step <= 8; ++step) EXPECT_EQ(la.at(step), lb.at(step)) << "step " << step;
}

}  // namespace
}  // namespace kforge::test
