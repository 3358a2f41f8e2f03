// train.mixed_precision on the CPU: bf16 autocast with fp32 master weights tracks the fp32 run (fp16:
// fp16_training_test.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "core/train/train_fixture.h"
#include "core/train/weight_recorder.h"

namespace kforge::test {
namespace {

TEST(MixedPrecision, Bf16KeepsFp32MasterWeightsAndTracksTheFp32LossCurve) {
  TrainFixture fp32_fx, bf16_fx;
  auto fp32 = std::make_shared<RecordingHook>();
  fp32_fx.run({}, {fp32});
  auto bf16 = std::make_shared<RecordingHook>();
  auto rec = std::make_shared<WeightRecorder>(std::vector<std::string>{});
  bf16_fx.run({"--train.mixed_precision=bf16"}, {bf16, rec});

  ASSERT_EQ(bf16->losses.size(), 20u);
  bool differs = false;
  for (const auto& [step, loss] : fp32->losses) {
    // bf16 keeps 8 mantissa bits: matmul outputs carry ~0.4% relative error; over 20 steps the
    // loss stays within 2% of the fp32 curve (measured: below 0.5%).
    EXPECT_NEAR(bf16->losses.at(step), loss, 0.02 * loss) << "step " << step;
    differs = differs || bf16->losses.at(step) != loss;
  }
  EXPECT_TRUE(differs) << "bf16 autocast must actually change the arithmetic";
  EXPECT_LT(bf16->losses.at(20), bf16->losses.at(1)) << "and still learn";
  ASSERT_FALSE(rec->dtypes.empty());
  for (const auto& [name, dtype] : rec->dtypes) EXPECT_EQ(dtype, at::kFloat) << name << " is a master weight";
}

}  // namespace
}  // namespace kforge::test
