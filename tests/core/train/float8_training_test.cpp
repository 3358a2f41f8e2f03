// [train] mixed_precision = "fp8" through `kforge launch`: KempnerForge's 7b_16gpu_fp8 preset scaled to a tiny shape
// trains on one rank and on two FSDP ranks, two FSDP ranks match one rank fed the same micro-batches, and a resumed
// two-rank run reproduces the straight one bit for bit (the scales are recomputed each step: no state). Its refusals:
// preflight_test.cpp, world_rules_test.cpp.
#include <gtest/gtest.h>

#include <iostream>
#include <limits>
#include <string>

#include "core/train/scaled_preset.h"
#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/precision_parity.h"
#include "support/same_checkpoint.h"

namespace kforge::test {
namespace {

TEST(Float8Training, ScaledPresetTrainsOnOneRankAndOnTwoFsdpRanks) {
  expect_scaled_preset_trains("7b_16gpu_fp8", 1, {}, 2);
  expect_scaled_preset_trains("7b_16gpu_fp8", 2, {"--distributed.dp_shard=2"}, 2);
}

// Float8's scales are per tensor, so a run matches another only where each forward sees the same micro-batch: with
// batch_size = 1, two ranks with 2 micro-batches each take samples (0, 2) and (1, 3) of the shuffled order, one rank
// with 4 takes 0 to 3, each sample alone. Step 1 then computes every micro-batch's loss and gradients bit for bit
// alike from the same weights (FSDP's float8 gather agrees on each weight's whole amax, float8_codes.h): the
// runs differ only in the order the four are summed in (fp32), kParityTolerance. That order moves the weights after
// step 1 by fp32 rounding, and a weight element that lies that close to a bf16 or float8 rounding boundary rounds
// to the neighbouring value in one run: far fewer operands differ than in a bf16 run against one rank, where any
// operand may land one bf16 step apart, so steps 2 and 3 take the bf16 parity tolerances (precision_parity.h).
TEST(Float8Training, TwoFsdpRanksMatchOneRankFedTheSameMicroBatches) {
  const std::vector<std::string> args = {"--train.mixed_precision=fp8", "--train.batch_size=1", "--train.max_steps=3",
                                         "--train.grad_clip_norm=1e9"};
  TrainFixture one, two, bf16;
  std::string output;
  ASSERT_EQ(launch(one, 1, with(args, {"--train.grad_accum_steps=4"}), &output), 0) << output;
  EXPECT_NE(output.find("the float8 linears round their operands to float8"), std::string::npos)
      << "the start-up warning of the CPU path:\n" << output;
  launch(two, 2, with(args, {"--train.grad_accum_steps=2", "--distributed.dp_shard=2"}));
  launch(bf16, 1, with(args, {"--train.grad_accum_steps=4", "--train.mixed_precision=bf16"}));
  EXPECT_NE(metric(one, "train/loss").at(1), metric(bf16, "train/loss").at(1)) << "fp8 must change the arithmetic";
  for (const auto& [key, later] : {std::pair<std::string, double>{"train/loss", kBf16LossTolerance},
                                   std::pair<std::string, double>{"train/grad_norm", kBf16GradientTolerance}}) {
    SCOPED_TRACE(key);
    const auto a = metric(two, key), b = metric(one, key);
    ASSERT_TRUE(a.count(3) && b.count(3));
    expect_close(a, b, 1, 1, kParityTolerance);
    expect_close(a, b, 2, 3, later);
    for (int64_t step = 1; step <= 3; ++step) {
      std::cout << "[measured] fp8 " << key << " step " << step << ": two FSDP ranks minus one rank "
                << a.at(step) - b.at(step) << " (of " << b.at(step) << ")\n";
    }
  }
}

TEST(Float8Training, ResumingATwoRankFsdpRunReproducesTheStraightRunBitExactly) {
  const std::vector<std::string> common = {"--train.mixed_precision=fp8", "--scheduler.name=constant",
                                           "--distributed.dp_shard=2"};
  TrainFixture straight, split;
  launch(straight, 2, with(common, {"--train.max_steps=10"}));
  launch(split, 2, with(common, {"--train.max_steps=5"}));
  launch(split, 2, with(common, {"--train.max_steps=10"}));  // resumes from step 5 in the same directory
  // Bit for bit: the model's tensors differ by less than the smallest double (only 0 is), the moments by 0.
  expect_same_logical_tensors(straight.checkpoint_dir / "step_10", split.checkpoint_dir / "step_10",
                              std::numeric_limits<double>::denorm_min(), 0.0);
  expect_close(metric(split, "train/loss"), metric(straight, "train/loss"), 1, 10, 0.0);
}

}  // namespace
}  // namespace kforge::test
