// Comparing checkpoints' logical tensors (see same_checkpoint.h).
#include "support/same_checkpoint.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <tuple>
#include <utility>

#include "checkpoint/checkpoint_manager.h"
#include "support/max_abs_diff.h"

namespace kforge::test {

void expect_same_logical_tensors(const std::filesystem::path& a, const std::filesystem::path& b, double tolerance,
                                 double optimizer_tolerance) {
  const auto whole = checkpoint::CheckpointManager::load(a);
  const auto other = checkpoint::CheckpointManager::load(b);
  ASSERT_EQ(whole.model.size(), other.model.size());
  for (const auto& [name, t] : whole.model) {
    ASSERT_TRUE(other.model.count(name)) << name;
    ASSERT_EQ(t.sizes(), other.model.at(name).sizes()) << name;
    EXPECT_LT(max_abs_diff(t, other.model.at(name)), tolerance) << name;
  }
  ASSERT_EQ(whole.optimizer.size(), other.optimizer.size());
  double worst = 0;
  std::string worst_name;
  for (const auto& [name, t] : whole.optimizer) {
    ASSERT_TRUE(other.optimizer.count(name)) << name;
    const at::Tensor& o = other.optimizer.at(name);
    ASSERT_EQ(t.sizes(), o.sizes()) << name;
    if (!at::isFloatingType(t.scalar_type())) {
      EXPECT_TRUE(at::equal(t, o)) << name << ": " << t << " against " << o;
    } else if (t.numel() > 0) {
      const double scale = t.abs().max().item<double>(), diff = max_abs_diff(t, o);
      EXPECT_LE(diff, optimizer_tolerance * scale) << name << " (largest magnitude " << scale << ")";
      if (diff > worst * scale) std::tie(worst, worst_name) = std::pair(diff / scale, name);
    }
  }
  std::cout << "[measured] optimizer state against one rank's: largest difference " << worst
            << " of the tensor's largest magnitude (" << worst_name << ")\n";
}

}  // namespace kforge::test
