// Exact resume: 20 steps straight equal 10 steps + resume + 10 (KempnerForge's test_resume_determinism).
#include <gtest/gtest.h>

#include "core/train/exact_resume.h"
#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

TEST(Resume, InterruptedRunReproducesTheStraightRunBitExactly) {
  TrainFixture straight, split;
  expect_exact_resume({"--train.grad_accum_steps=2", "--checkpoint.interval=1000"}, straight, split);
}

TEST(Resume, ResumingAFinishedRunTrainsNoFurther) {
  TrainFixture fx;
  fx.run({"--train.max_steps=6"}, {});
  auto hook = std::make_shared<RecordingHook>();
  const auto again = fx.run({"--train.max_steps=6"}, {hook});
  EXPECT_EQ(again.resumed_from, 6);
  EXPECT_EQ(again.step, 6);
  EXPECT_TRUE(hook->losses.empty());
}

TEST(Resume, LoadPathStartsANewDirectoryFromAnotherRunsCheckpoint) {
  TrainFixture source;
  source.run({"--train.max_steps=5"}, {});
  TrainFixture target;
  auto hook = std::make_shared<RecordingHook>();
  const auto result =
      target.run({"--train.max_steps=8", "--checkpoint.load_path=" + (source.checkpoint_dir / "step_5").string()}, {hook});
  EXPECT_EQ(result.resumed_from, 5);
  EXPECT_EQ(hook->losses.begin()->first, 6);
}

}  // namespace
}  // namespace kforge::test
