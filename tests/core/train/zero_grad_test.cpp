// Between steps the trainer drops the gradients instead of zeroing them; a parameter that trains and gets no gradient in
// a step still gets a zero one (so AdamW applies its momentum and decay to it, as on several ranks), in a resumed run
// as in an uninterrupted one.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/train/train_fixture.h"
#include "train/step.h"

namespace kforge::test {
namespace {

/// Every parameter's value before each step after the first of a run to `max_steps` (by step index), which resumes
/// from the fixture's checkpoint when one is there. Step 1 trains the model on its batch; later steps only square the
/// first parameter, so no gradient reaches the others, unless `touch_all` adds 0 x each parameter's sum: a zero
/// gradient for every one of them.
std::map<int64_t, std::vector<at::Tensor>> values_before_steps(const TrainFixture& fx, int64_t max_steps,
                                                               bool touch_all) {
  std::map<int64_t, std::vector<at::Tensor>> values;
  const train::StepFn step = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    if (trainer.step() == 0) return train::standard_step(trainer, batches);
    for (const auto& p : trainer.parameters()) values[trainer.step()].push_back(p.tensor.detach().clone());
    const auto& params = trainer.parameters();
    at::Tensor loss = params.front().tensor.square().sum();
    if (touch_all) {
      for (const auto& p : params) loss = loss + p.tensor.sum() * 0.0;
    }
    loss.backward();
    trainer.sync_gradients();
    return train::StepResult{loss.item<double>(), trainer.clip_gradients(1.0), {}};
  };
  fx.run({"--train.max_steps=" + std::to_string(max_steps)}, {}, step);
  return values;
}

void expect_equal(const std::vector<at::Tensor>& expected, const std::vector<at::Tensor>& actual, int64_t step) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(at::equal(expected[i], actual[i])) << "parameter " << i << " before step " << step + 1;
  }
}

TEST(ZeroGrad, AParameterNoGradientReachesGetsTheZeroGradientUpdate) {
  const TrainFixture reached_fx, unreached_fx;
  const auto reached = values_before_steps(reached_fx, 4, true), unreached = values_before_steps(unreached_fx, 4, false);
  ASSERT_EQ(reached.size(), 3u);
  ASSERT_EQ(unreached.size(), 3u);
  for (const auto& [step, values] : reached) expect_equal(values, unreached.at(step), step);
  // Not vacuous: a parameter no gradient reached in step 2 moved in it (AdamW's momentum from step 1).
  EXPECT_FALSE(at::equal(unreached.at(1).back(), unreached.at(2).back()));
}

TEST(ZeroGrad, AResumedRunUpdatesTheParametersNoGradientReachesAsTheUninterruptedRun) {
  const TrainFixture whole_fx, resumed_fx;
  const auto whole = values_before_steps(whole_fx, 8, false);
  values_before_steps(resumed_fx, 5, false);  // the fixture saves at step 5
  const auto resumed = values_before_steps(resumed_fx, 8, false);
  ASSERT_EQ(resumed.size(), 3u);  // steps 6, 7 and 8
  for (const auto& [step, values] : resumed) expect_equal(whole.at(step), values, step);
}

}  // namespace
}  // namespace kforge::test
