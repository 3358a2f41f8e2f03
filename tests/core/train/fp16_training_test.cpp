// [train] mixed_precision = "fp16" on the CPU: fp32 master weights tracking the fp32 loss curve, overflows skipped
// (no optimizer or scheduler step) and counted while the loss scale backs off, bit-exact resume with the scale in the
// checkpoint, activation checkpointing's recomputation, two ranks skipping together, the keys' refusals, and a step
// body that skips the unscaling.
#include <gtest/gtest.h>

#include <cmath>

#include "core/train/exact_resume.h"
#include "core/train/train_fixture.h"
#include "core/train/weight_recorder.h"
#include "kforge/sdk/error.h"
#include "support/launch_job.h"

namespace kforge::test {
namespace {

const std::string kFp16Flag = "--train.mixed_precision=fp16";

TEST(Fp16Training, KeepsFp32MasterWeightsAndTracksTheFp32LossCurve) {
  TrainFixture fp32_fx, fp16_fx;
  auto fp32 = std::make_shared<RecordingHook>(), fp16 = std::make_shared<RecordingHook>();
  auto rec = std::make_shared<WeightRecorder>(std::vector<std::string>{});
  fp32_fx.run({}, {fp32});
  fp16_fx.run({kFp16Flag}, {fp16, rec});
  ASSERT_EQ(fp16->losses.size(), 20u);
  EXPECT_TRUE(metric(fp16_fx, "train/skipped_steps").empty()) << "the default scale does not overflow this model";
  bool differs = false;
  for (const auto& [step, loss] : fp32->losses) {
    // fp16 keeps 11 significant bits, 3 more than bf16: its rounding is 8x smaller than bf16's, whose curve stays
    // within 2% of fp32's over these 20 steps (MixedPrecision.Bf16KeepsFp32MasterWeightsAndTracksTheFp32LossCurve).
    EXPECT_NEAR(fp16->losses.at(step), loss, 0.0025 * loss) << "step " << step;
    differs = differs || fp16->losses.at(step) != loss;
  }
  EXPECT_TRUE(differs) << "fp16 must actually change the arithmetic";
  ASSERT_FALSE(rec->dtypes.empty());
  for (const auto& [name, dtype] : rec->dtypes) EXPECT_EQ(dtype, at::kFloat) << name << " is a master weight";
  const auto scale = metric(fp16_fx, "train/loss_scale");
  ASSERT_EQ(scale.size(), 20u);
  for (const auto& [step, value] : scale) EXPECT_EQ(value, 65536.0) << "step " << step << ": no growth before 2000";
}

TEST(Fp16Training, OverflowsAreSkippedAndCountedWhileTheScaleBacksOff) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  const auto result = fx.run({kFp16Flag, "--train.loss_scale_init=1073741824"}, {hook});  // 2^30
  EXPECT_EQ(result.outcome, train::Outcome::Completed);
  EXPECT_EQ(result.step, 20) << "skipped steps are not optimizer steps";
  ASSERT_EQ(hook->losses.size(), 20u);
  for (const auto& [step, loss] : hook->losses) EXPECT_TRUE(std::isfinite(loss)) << "step " << step;
  EXPECT_LT(hook->losses.at(20), hook->losses.at(1));
  const auto skipped = metric(fx, "train/skipped_steps");
  ASSERT_FALSE(skipped.empty()) << "2^30 overflows fp16";
  // All before the first optimizer step (logged as step 1): the scale halves until the gradients fit, then holds.
  EXPECT_EQ(skipped.rbegin()->first, 1);
  const double k = skipped.rbegin()->second;
  EXPECT_GE(k, 1.0);
  const auto scale = metric(fx, "train/loss_scale");
  EXPECT_EQ(scale.at(20), std::ldexp(1.0, 30 - static_cast<int>(k)));
  const auto lr = metric(fx, "train/lr");
  TrainFixture plain;
  plain.run({kFp16Flag}, {});
  EXPECT_EQ(lr, metric(plain, "train/lr")) << "the skipped steps did not advance the schedule";
}

TEST(Fp16Training, ResumeWithTheScaleInTheCheckpointIsBitExact) {
  TrainFixture straight, split;
  // 2^24 overflows; growth every 4 clean steps makes it overflow again after the resume at step 10, from the saved
  // scale and clean-step count.
  expect_exact_resume({kFp16Flag, "--train.loss_scale_init=16777216", "--train.loss_scale_growth_interval=4",
                       "--checkpoint.interval=1000"},
                      straight, split);
  const auto skipped = metric(straight, "train/skipped_steps");
  ASSERT_FALSE(skipped.empty());
  EXPECT_GT(skipped.rbegin()->first, 10) << "an overflow after the resume point";
  EXPECT_EQ(metric(split, "train/skipped_steps"), skipped);
  EXPECT_EQ(metric(split, "train/loss_scale"), metric(straight, "train/loss_scale"));
}

// A recomputed block runs under the step's fp16 state again: the same losses, bit for bit, as without recomputation.
TEST(Fp16Training, ActivationCheckpointingRecomputesInFp16) {
  TrainFixture plain_fx, recomputed_fx;
  auto plain = std::make_shared<RecordingHook>(), recomputed = std::make_shared<RecordingHook>();
  plain_fx.run({kFp16Flag, "--train.max_steps=5"}, {plain});
  recomputed_fx.run({kFp16Flag, "--train.max_steps=5", "--train.activation_checkpointing=full"}, {recomputed});
  ASSERT_EQ(recomputed->losses.size(), 5u);
  EXPECT_EQ(recomputed->losses, plain->losses);
}

// Two FSDP ranks (each checks its own gradient shards; the overflow is agreed over the world): both skip the same
// steps with the same scales, and train the 20 steps.
TEST(Fp16Training, TwoRanksSkipTheSameStepsWithTheSameScale) {
  TrainFixture fx;
  launch(fx, 2, {kFp16Flag, "--train.loss_scale_init=1073741824", "--train.loss_scale_growth_interval=4",
                 "--metrics.per_rank=true"});
  const auto rank1 = fx.checkpoint_dir / "rank_1" / "metrics.jsonl";
  const auto skipped = metric(fx, "train/skipped_steps");
  ASSERT_FALSE(skipped.empty());
  EXPECT_EQ(metric(rank1, "train/skipped_steps"), skipped);
  const auto scale = metric(fx, "train/loss_scale");
  EXPECT_EQ(metric(rank1, "train/loss_scale"), scale);
  EXPECT_TRUE(scale.count(20)) << "20 optimizer steps";
}

TEST(Fp16Training, LossScaleKeysAreRefusedWithoutFp16AndOutOfRange) {
  TrainFixture fx;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--train.loss_scale_init=1024"}, "loss_scale_init"},
      {{"--train.mixed_precision=fp32", "--train.loss_scale_growth_interval=10"}, "loss_scale_growth_interval"},
      {{kFp16Flag, "--train.loss_scale_backoff=1.5"}, "loss_scale_backoff"},
      {{kFp16Flag, "--train.loss_scale_growth=1.0"}, "loss_scale_growth"},
      {{kFp16Flag, "--train.loss_scale_init=0"}, "loss_scale_init"}};
  for (const auto& [overrides, key] : cases) {
    try {
      fx.job(overrides);
      ADD_FAILURE() << key;
    } catch (const sdk::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("[train] " + key), std::string::npos) << e.what();
    }
  }
}

TEST(Fp16Training, AStepBodyThatDoesNotUnscaleIsAnError) {
  TrainFixture fx;
  const train::StepFn no_clip = [](train::Trainer&, const std::vector<data::Batch>&) {
    return train::StepResult{1.0, 1.0, {}};
  };
  try {
    fx.run({kFp16Flag}, {}, no_clip);
    FAIL() << "the loop cannot tell an overflow without the unscaling";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("scale_loss"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test
