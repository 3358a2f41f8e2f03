// Freezing inside a real run: frozen parameters never move (no weight-decay drift), a schedule
// unfreezes at its step, and a checkpoint refuses a resume under a different freeze state.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "core/train/train_fixture.h"
#include "core/train/weight_recorder.h"
#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {

// Strong weight decay on embeddings too, so a frozen parameter that got a decay step would move.
const std::vector<std::string> kDecay = {"--optimizer.weight_decay=0.5", "--optimizer.decay_embeddings=true"};

TEST(FreezeTraining, FrozenEmbeddingNeverMovesWhileTheRestTrains) {
  TrainFixture fx;
  fx.toml += "\n[[train.freeze]]\nmodule = \"token_embedding.*\"\n";
  auto rec = std::make_shared<WeightRecorder>(std::vector<std::string>{"token_embedding.", "layers.0."});
  fx.run(kDecay, {rec});
  EXPECT_TRUE(rec->unchanged("token_embedding.", 1, 20));
  EXPECT_FALSE(rec->unchanged("layers.0.", 1, 20));
  // Had the parameters been renamed, the checks above would fail rather than pass as "changed".
  EXPECT_NONFATAL_FAILURE(rec->unchanged("renamed_embedding.", 1, 20), "no recorded parameter starts with");
}

TEST(FreezeTraining, ScheduleUnfreezesAtItsStartStep) {
  TrainFixture fx;
  fx.toml += "\n[[train.freeze]]\nmodule = \"layers.0.*\"\n"
             "\n[[train.freeze_schedule]]\nstart_step = 6\n[[train.freeze_schedule.specs]]\n"
             "module = \"layers.0.*\"\nfrozen = false\n";
  auto rec = std::make_shared<WeightRecorder>(std::vector<std::string>{"layers.0."});
  fx.run(kDecay, {rec});
  EXPECT_TRUE(rec->unchanged("layers.0.", 1, 6)) << "frozen for the updates of steps 1..6";
  EXPECT_FALSE(rec->unchanged("layers.0.", 6, 7)) << "the stage at step 6 unfreezes the 7th update";
}

TEST(FreezeTraining, ResumeUnderADifferentFreezeStateIsRefusedNamingTheModule) {
  TrainFixture fx;
  const std::string plain = fx.toml;
  fx.toml += "\n[[train.freeze]]\nmodule = \"layers.1.*\"\n";
  fx.run({"--train.max_steps=5"}, {});
  // As KempnerForge, only modules named on both sides are compared: name it, now unfrozen.
  fx.toml = plain + "\n[[train.freeze]]\nmodule = \"layers.1.*\"\nfrozen = false\n";
  try {
    fx.run({"--train.max_steps=10"}, {});
    FAIL() << "a resume with layers.1 no longer frozen must be refused";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layers.1.*"), std::string::npos) << e.what();
  }
  auto rec = std::make_shared<WeightRecorder>(std::vector<std::string>{});
  const auto resumed = fx.run({"--train.max_steps=10", "--checkpoint.ignore_freeze_mismatch=true"}, {rec});
  EXPECT_EQ(resumed.resumed_from, 5);
  EXPECT_EQ(resumed.step, 10);
}

}  // namespace
}  // namespace kforge::test
