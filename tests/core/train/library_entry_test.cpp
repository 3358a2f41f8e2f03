// The library entry point: an experiment supplies its own step body and hooks to run_training.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

TEST(LibraryEntryPoint, CustomStepBodyAndHookDriveAFullRun) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  int step_calls = 0;
  train::StepFn counting_step = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    ++step_calls;
    EXPECT_EQ(batches.size(), 2u);  // grad_accum_steps micro-batches per optimizer step
    EXPECT_EQ(batches.front().input_ids.sizes(), (std::vector<int64_t>{4, 16}));
    return train::standard_step(trainer, batches);
  };
  const auto result = fx.run({"--train.grad_accum_steps=2", "--train.max_steps=12"}, {hook}, counting_step);

  EXPECT_EQ(result.outcome, train::Outcome::Completed);
  EXPECT_EQ(result.step, 12);
  EXPECT_EQ(result.tokens_seen, 12 * 2 * 4 * 16);
  EXPECT_EQ(step_calls, 12);
  ASSERT_EQ(hook->losses.size(), 12u);
  EXPECT_EQ(hook->events.front(), "begin 0");
  EXPECT_EQ(hook->events.back(), "end 12 1536");
  // The cyclic corpus is learnable: the loss must fall well below its start (ln 64 = 4.16).
  EXPECT_LT(hook->losses.at(12), hook->losses.at(1) - 1.0);
}

TEST(LibraryEntryPoint, HooksSeeEvalAndCheckpointEventsInLoopOrder) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  fx.run({"--train.max_steps=10", "--eval.enabled=true"}, {hook});
  const auto& e = hook->events;
  const auto pos = [&](const std::string& s) { return std::find(e.begin(), e.end(), s) - e.begin(); };
  ASSERT_LT(pos("eval 5 eval/loss"), static_cast<long>(e.size()));
  EXPECT_LT(pos("step 5"), pos("eval 5 eval/loss"));
  EXPECT_LT(pos("eval 5 eval/loss"), pos("save 5"));
  EXPECT_LT(pos("save 5"), pos("step 6"));
  EXPECT_LT(pos("save 10"), pos("end 10 640"));
}

TEST(LibraryEntryPoint, MetricsGoToTheJsonlBackend) {
  TrainFixture fx;
  fx.run({"--train.max_steps=5", "--eval.enabled=true"}, {});
  std::ifstream in(fx.checkpoint_dir / "metrics.jsonl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"step\":1,"), std::string::npos);
  EXPECT_NE(text.find("\"train/loss\""), std::string::npos);
  EXPECT_NE(text.find("\"train/mfu\""), std::string::npos);
  EXPECT_NE(text.find("\"eval/perplexity\""), std::string::npos);
}

}  // namespace
}  // namespace kforge::test

namespace kforge::test {
namespace {

// A launch whose mesh does not fit the launcher's world size is refused before any rendezvous
// (multi-process runs themselves are tested by test_distributed, tests/core/dist/CMakeLists.txt).
TEST(LibraryEntryPoint, RefusesAMeshThatDoesNotMatchTheLaunchersWorldSize) {
  TrainFixture fx;
  ::setenv("WORLD_SIZE", "2", 1);
  try {
    fx.run({"--train.max_steps=2", "--distributed.dp_shard=1"}, {});
    ::unsetenv("WORLD_SIZE");
    FAIL() << "dp_shard=1 on a WORLD_SIZE=2 launch must be refused";
  } catch (const sdk::ConfigError& e) {
    ::unsetenv("WORLD_SIZE");
    EXPECT_NE(std::string(e.what()).find("dp_shard"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("world_size (2)"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "step_2"));
}

}  // namespace
}  // namespace kforge::test
