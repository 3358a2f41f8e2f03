// Context parallelism ([distributed] cp): real jobs through `kforge launch` on 127.0.0.1 against one rank training the
// same global batch, in fp32 over 20 steps: cp = 2 and cp = 4 (losses, gradient norms, and every parameter's gradient
// through the step-1 checkpoints' AdamW moments), packed documents whose masks cross the ranks' chunks, cp x dp_shard
// (FSDP over both), cp x tp; cp = 2 under bf16 autocast at its derived tolerances; a cp = 2 checkpoint resumed on one rank and
// a one-rank checkpoint resumed at cp = 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/precision_parity.h"
#include "support/same_checkpoint.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test {
namespace {

// Step 1 checkpointed, unclipped: its AdamW first moments are (1 - beta1) times each parameter's gradient.
const std::vector<std::string> kStepOneSaved = {"--checkpoint.interval=1", "--checkpoint.keep_last_n=0",
                                                "--train.grad_clip_norm=1e9"};

// The parallel run's losses and gradient norms over 20 steps, and each parameter's step-1 gradient, against one rank's.
void expect_gradient_parity(const TrainFixture& parallel, const TrainFixture& one) {
  expect_parity(parallel, one, 1, 20);
  // After one step a parameter has moved by at most lr (the fixture's 1e-2) either way: 2 lr apart at most. The
  // moments hold g and g^2 (twice g's relative difference).
  expect_same_logical_tensors(one.checkpoint_dir / "step_1", parallel.checkpoint_dir / "step_1", 2 * 1e-2,
                              kOptimizerStateTolerance);
}

class ContextParallelRanks : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Sizes, ContextParallelRanks, ::testing::Values(2, 4),
                         [](const auto& info) { return fmt::format("Cp{}", info.param); });

TEST_P(ContextParallelRanks, MatchOneRankWithAndWithoutPackedDocuments) {
  const int cp = GetParam();
  TrainFixture plain_one, plain_cp, packed_one, packed_cp;
  const auto args = with({"--train.max_steps=20", "--eval.enabled=true"}, kStepOneSaved);
  launch(plain_one, 1, args);
  std::string output;
  ASSERT_EQ(launch(plain_cp, cp, with(args, {fmt::format("--distributed.cp={}", cp)}), &output), 0) << output;
  EXPECT_NE(output.find(fmt::format("[distributed] cp = {}: every sequence is cut into {} chunks", cp, 2 * cp)),
            std::string::npos)
      << output;
  expect_gradient_parity(plain_cp, plain_one);
  for (const int64_t step : {5, 10, 15, 20})
    expect_close(metric(plain_cp, "eval/loss"), metric(plain_one, "eval/loss"), step, step);

  // Documents end at the tokenizer's EOS (token 2, every 64 tokens of the corpus): in windows of 16 they start inside
  // the ranks' chunks and run across them.
  const auto packed = with(args, {"--data.pack_sequences=true", "--data.tokenizer_path=" +
                                                                     tiny_tokenizer(packed_one.root).string()});
  launch(packed_one, 1, packed);
  launch(packed_cp, cp, with(packed, {fmt::format("--distributed.cp={}", cp)}));
  expect_gradient_parity(packed_cp, packed_one);
  EXPECT_NE(metric(packed_one, "train/loss"), metric(plain_one, "train/loss")) << "the documents must change the run";
}

// Four ranks, dp_shard = 2 x cp = 2: FSDP shards over all four, each cp pair sees one half of the global batch.
TEST(ContextParallel, TimesFsdpOnFourRanksMatchesOneRank) {
  TrainFixture one, four;
  const auto args = with({"--train.max_steps=20"}, kStepOneSaved);
  launch(one, 1, with(args, {"--train.batch_size=8"}));
  std::string output;
  ASSERT_EQ(launch(four, 4, with(args, {"--distributed.cp=2", "--distributed.dp_shard=2"}), &output), 0) << output;
  EXPECT_NE(output.find("FSDP over dp_shard x cp = 4"), std::string::npos) << output;
  expect_gradient_parity(four, one);
}

// Four ranks, cp = 2 x tp = 2: each tp rank rings its own heads (with sequence parallelism between the layers).
TEST(ContextParallel, TimesTensorParallelOnFourRanksMatchesOneRank) {
  TrainFixture one, four;
  const auto args = with({"--train.max_steps=20"}, kStepOneSaved);
  launch(one, 1, args);
  std::string output;
  ASSERT_EQ(launch(four, 4, with(args, {"--distributed.cp=2", "--distributed.tp=2"}), &output), 0) << output;
  EXPECT_NE(output.find("[distributed] tp = 2: this rank holds its slice"), std::string::npos) << output;
  EXPECT_NE(output.find("[distributed] cp = 2: every sequence"), std::string::npos) << output;
  expect_gradient_parity(four, one);
}

// Under bf16 autocast, against one rank at support/precision_parity.h's tolerances: the ring attention computes in
// float32 and rounds its output once, as the one-rank kernels do; the gradients reduce over the ranks as data
// parallelism's do.
TEST(ContextParallel, Bf16MatchesOneRankAtItsTolerances) {
  const Precision& bf16 = parity_precisions().at(1);
  ASSERT_EQ(bf16.name, "bf16");
  const auto args = with({fmt::format("--train.max_steps={}", bf16.last_step)}, bf16.overrides);
  TrainFixture one, two;
  launch(one, 1, args);
  launch(two, 2, with(args, {"--distributed.cp=2"}));
  expect_parity(two, one, bf16);
}

// A cp = 2 checkpoint holds the one-rank run's tensors and resumes on one rank, continuing its losses; a one-rank
// checkpoint resumes at cp = 2.
TEST(ContextParallel, CheckpointsResumeAcrossCp) {
  const std::vector<std::string> constant = {"--scheduler.name=constant"};  // 10 steps are the 20 steps' first half
  TrainFixture one, two, resumed;
  launch(one, 1, with({"--train.max_steps=20"}, constant));
  launch(two, 2, with({"--train.max_steps=10", "--distributed.cp=2"}, constant));
  expect_same_logical_tensors(one.checkpoint_dir / "step_10", two.checkpoint_dir / "step_10", 1e-4,
                              kOptimizerStateTolerance);
  std::string output;
  ASSERT_EQ(launch(resumed, 1,
                   with({"--train.max_steps=20", "--checkpoint.load_path=" + (two.checkpoint_dir / "step_10").string()},
                        constant),
                   &output),
            0)
      << output;
  EXPECT_NE(output.find("resumed from step 10"), std::string::npos) << output;
  expect_parity(resumed, one, 11, 20);

  TrainFixture split;
  launch(split, 2,
         with({"--train.max_steps=20", "--distributed.cp=2",
               "--checkpoint.load_path=" + (one.checkpoint_dir / "step_10").string()},
              constant));
  expect_parity(split, one, 11, 20);
}

}  // namespace
}  // namespace kforge::test
