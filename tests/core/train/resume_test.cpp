// Exact resume: 20 steps straight equal 10 steps + resume + 10 (KempnerForge's test_resume_determinism).
#include <gtest/gtest.h>

#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

TEST(Resume, InterruptedRunReproducesTheStraightRunBitExactly) {
  TrainFixture straight;
  auto all = std::make_shared<RecordingHook>();
  straight.run({"--train.grad_accum_steps=2"}, {all});
  ASSERT_EQ(all->losses.size(), 20u);

  TrainFixture split;
  auto first = std::make_shared<RecordingHook>();
  first->stop_at = 10;
  const auto stopped = split.run({"--train.grad_accum_steps=2", "--checkpoint.interval=1000"}, {first});
  EXPECT_EQ(stopped.outcome, train::Outcome::StoppedByHook);
  EXPECT_EQ(stopped.step, 10);

  auto second = std::make_shared<RecordingHook>();
  const auto resumed = split.run({"--train.grad_accum_steps=2", "--checkpoint.interval=1000"}, {second});
  EXPECT_EQ(resumed.resumed_from, 10);
  EXPECT_EQ(resumed.step, 20);
  ASSERT_EQ(second->losses.size(), 10u);
  for (int64_t step = 11; step <= 20; ++step) {
    EXPECT_EQ(second->losses.at(step), all->losses.at(step)) << "step " << step;
  }
  for (int64_t step = 1; step <= 10; ++step) EXPECT_EQ(first->losses.at(step), all->losses.at(step));
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
