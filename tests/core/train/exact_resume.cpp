// The shared exact-resume check (see exact_resume.h).
#include "core/train/exact_resume.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "checkpoint/checkpoint_manager.h"

namespace kforge::test {

void expect_exact_resume(const std::vector<std::string>& overrides, TrainFixture& straight, TrainFixture& split) {
  auto all = std::make_shared<RecordingHook>();
  straight.run(overrides, {all});
  ASSERT_EQ(all->losses.size(), 20u);
  auto first = std::make_shared<RecordingHook>();
  first->stop_at = 10;
  const auto stopped = split.run(overrides, {first});
  ASSERT_EQ(stopped.outcome, train::Outcome::StoppedByHook);
  ASSERT_EQ(stopped.step, 10);
  auto second = std::make_shared<RecordingHook>();
  const auto resumed = split.run(overrides, {second});
  EXPECT_EQ(resumed.resumed_from, 10);
  EXPECT_EQ(resumed.step, 20);
  for (int64_t step = 1; step <= 20; ++step) {
    const auto& part = step <= 10 ? first->losses : second->losses;
    ASSERT_TRUE(part.count(step)) << "step " << step;
    EXPECT_EQ(part.at(step), all->losses.at(step)) << "step " << step;
  }
  const checkpoint::Snapshot a = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_20");
  const checkpoint::Snapshot b = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_20");
  ASSERT_EQ(a.model.size(), b.model.size());
  ASSERT_EQ(a.optimizer.size(), b.optimizer.size());
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
  for (const auto& [name, t] : a.optimizer) EXPECT_TRUE(at::equal(t, b.optimizer.at(name))) << name;
}

}  // namespace kforge::test
