// Exact resume, the check several tests share: a run stopped and resumed reproduces the straight run bit for bit.
#pragma once

#include <string>
#include <vector>

#include "core/train/train_fixture.h"

namespace kforge::test {

/// Trains the fixture's 20 steps with `overrides` straight in `straight`, and in `split` stopped by a hook at step 10
/// then resumed to 20; expects every step's loss and the step-20 checkpoint's model and optimizer tensors
/// bit-identical, and the resumed part to start from step 10.
void expect_exact_resume(const std::vector<std::string>& overrides, TrainFixture& straight, TrainFixture& split);

}  // namespace kforge::test
