// Comparing checkpoints' logical tensors (see same_checkpoint.h).
#include "support/same_checkpoint.h"

#include <gtest/gtest.h>

#include "checkpoint/checkpoint_manager.h"
#include "support/max_abs_diff.h"

namespace kforge::test {

void expect_same_logical_tensors(const std::filesystem::path& a, const std::filesystem::path& b, double tolerance) {
  const auto whole = checkpoint::CheckpointManager::load(a);
  const auto other = checkpoint::CheckpointManager::load(b);
  ASSERT_EQ(whole.model.size(), other.model.size());
  for (const auto& [name, t] : whole.model) {
    ASSERT_TRUE(other.model.count(name)) << name;
    ASSERT_EQ(t.sizes(), other.model.at(name).sizes()) << name;
    EXPECT_LT(max_abs_diff(t, other.model.at(name)), tolerance) << name;
  }
  ASSERT_EQ(whole.optimizer.size(), other.optimizer.size());
  for (const auto& [name, t] : whole.optimizer) {
    ASSERT_TRUE(other.optimizer.count(name)) << name;
    EXPECT_EQ(t.sizes(), other.optimizer.at(name).sizes()) << name;
  }
}

}  // namespace kforge::test
