// StepProfiler: records exactly the steps [start_step, end_step) and writes the trace at end_step.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "profiling/step_profiler.h"
#include "profiling/user_scope.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

void step_body() {
  profiling::UserScope scope("forward");
  at::mm(at::ones({4, 4}), at::ones({4, 4}));
}

TEST(StepProfiler, RecordsStepsFromStartToEndAndWritesOnce) {
  const auto dir = temp_dir("step_profiler");
  profiling::StepProfiler profiler(true, 2, 4, dir, 0);
  std::vector<std::filesystem::path> written;
  for (int64_t step = 0; step < 6; ++step) {
    profiler.before_step(step);
    step_body();
    if (auto path = profiler.after_step(step + 1)) written.push_back(*path);
  }
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0], dir / "trace_steps2-4_rank0.json");
  EXPECT_TRUE(std::filesystem::exists(written[0]));
  int scopes = 0;
  for (const auto& e : profiler.recorder().events()) scopes += e.user_scope ? 1 : 0;
  EXPECT_EQ(scopes, 2) << "steps 2 and 3 only";
}

TEST(StepProfiler, DisabledRecordsNothing) {
  const auto dir = temp_dir("step_profiler_off");
  profiling::StepProfiler profiler(false, 0, 1, dir, 0);
  profiler.before_step(0);
  step_body();
  EXPECT_FALSE(profiler.after_step(1).has_value());
  EXPECT_TRUE(profiler.recorder().events().empty());
}

}  // namespace
}  // namespace kforge::test
