// Between steps the trainer drops the gradients instead of zeroing them; a parameter that had a gradient and gets none
// in a later step still gets a zero one (so AdamW still applies its momentum and decay to it), as zeroing gave it.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/train/train_fixture.h"
#include "train/step.h"

namespace kforge::test {
namespace {

/// Every parameter's value after each of a 3-step run's steps 1 and 2. Step 1 trains the model on its batch; steps 2
/// and 3 only square the first parameter, so no gradient reaches the others, unless `touch_all` adds 0 x each
/// parameter's sum: a zero gradient for every one of them.
std::vector<std::vector<at::Tensor>> values_after_steps(bool touch_all) {
  TrainFixture fx;
  std::vector<std::vector<at::Tensor>> values;
  const train::StepFn step = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    std::vector<at::Tensor> now;
    for (const auto& p : trainer.parameters()) now.push_back(p.tensor.detach().clone());
    if (trainer.step() > 0) values.push_back(std::move(now));
    if (trainer.step() == 0) return train::standard_step(trainer, batches);
    const auto& params = trainer.parameters();
    at::Tensor loss = params.front().tensor.square().sum();
    if (touch_all) {
      for (const auto& p : params) loss = loss + p.tensor.sum() * 0.0;
    }
    loss.backward();
    trainer.sync_gradients();
    return train::StepResult{loss.item<double>(), trainer.clip_gradients(1.0), {}};
  };
  fx.run({"--train.max_steps=3"}, {}, step);
  return values;
}

TEST(ZeroGrad, AParameterNoGradientReachesGetsTheZeroGradientUpdate) {
  const auto reached = values_after_steps(true), unreached = values_after_steps(false);
  ASSERT_EQ(reached.size(), 2u);
  ASSERT_EQ(unreached.size(), 2u);
  for (size_t step = 0; step < 2; ++step) {
    ASSERT_EQ(reached[step].size(), unreached[step].size());
    for (size_t i = 0; i < reached[step].size(); ++i) {
      EXPECT_TRUE(at::equal(reached[step][i], unreached[step][i])) << "parameter " << i << " after step " << step + 1;
    }
  }
  // Not vacuous: a parameter no gradient reached in step 2 moved in it (AdamW's momentum from step 1).
  EXPECT_FALSE(at::equal(unreached[0].back(), unreached[1].back()));
}

}  // namespace
}  // namespace kforge::test
