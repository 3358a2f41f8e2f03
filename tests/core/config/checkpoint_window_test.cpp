// CheckpointConfig::should_save / is_milestone: inside [start, stop] the power2 strategy decides
// (start and start + 2^k), outside every `interval` steps (§1.1).
#include <gtest/gtest.h>

#include "config_helpers.h"

namespace kforge::test {
namespace {

config::CheckpointConfig checkpoint(const std::string& toml) { return load(toml).checkpoint; }

TEST(CheckpointWindow, WithoutAWindowEveryInterval) {
  const auto c = checkpoint("[checkpoint]\ninterval = 100\n");
  for (int64_t step : {100, 200, 1000}) EXPECT_TRUE(c.should_save(step)) << step;
  for (int64_t step : {1, 2, 4, 99, 150}) EXPECT_FALSE(c.should_save(step)) << step;
  for (int64_t step : {0, 1, 2, 100}) EXPECT_FALSE(c.is_milestone(step)) << step;
}

TEST(CheckpointWindow, Power2InsideTheWindow) {
  const auto c = checkpoint("[checkpoint]\ninterval = 100\n[checkpoint.dyn_ckpt_window]\nstart = 0\nstop = 512\n");
  std::vector<int64_t> saved;
  for (int64_t step = 0; step <= 512; ++step) {
    if (c.should_save(step)) saved.push_back(step);
    EXPECT_EQ(c.should_save(step), c.is_milestone(step)) << step;
  }
  EXPECT_EQ(saved, (std::vector<int64_t>{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
  // 100 and 200 are interval steps but inside the window, where only the strategy decides.
  EXPECT_FALSE(c.should_save(100));
  // After the window: the interval again, and no milestones.
  EXPECT_TRUE(c.should_save(600));
  EXPECT_FALSE(c.is_milestone(600));
  EXPECT_FALSE(c.should_save(1024));  // a power of two, but outside the window and not an interval step
  EXPECT_TRUE(c.should_save(1100));
}

TEST(CheckpointWindow, OffsetsCountFromStart) {
  const auto c = checkpoint("[checkpoint]\ninterval = 50\n[checkpoint.dyn_ckpt_window]\nstart = 100\nstop = 300\n");
  for (int64_t step : {100, 101, 102, 104, 108, 116, 132, 164, 228}) {
    EXPECT_TRUE(c.should_save(step)) << step;
    EXPECT_TRUE(c.is_milestone(step)) << step;
  }
  for (int64_t step : {103, 150, 200, 256, 300}) EXPECT_FALSE(c.should_save(step)) << step;
  // Before the window: the interval applies.
  EXPECT_TRUE(c.should_save(50));
  EXPECT_FALSE(c.is_milestone(50));
  EXPECT_FALSE(c.should_save(64));
  // 356 = start + 256 is past stop: not a milestone; 350 is an interval step.
  EXPECT_FALSE(c.is_milestone(356));
  EXPECT_TRUE(c.should_save(350));
}

TEST(CheckpointWindow, SingleStepWindow) {
  const auto c = checkpoint("[checkpoint]\ninterval = 10\n[checkpoint.dyn_ckpt_window]\nstart = 7\nstop = 7\n");
  EXPECT_TRUE(c.should_save(7));
  EXPECT_TRUE(c.is_milestone(7));
  EXPECT_FALSE(c.is_milestone(8));
  EXPECT_TRUE(c.should_save(10));
}

}  // namespace
}  // namespace kforge::test
