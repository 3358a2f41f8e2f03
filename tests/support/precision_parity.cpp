// Parity of a parallel run with one rank's at a precision (see precision_parity.h).
#include "support/precision_parity.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <utility>

#include "support/launch_job.h"
#include "support/same_checkpoint.h"

namespace kforge::test {

const std::vector<Precision>& parity_precisions() {
  static const std::vector<Precision> precisions = {
      {"fp32", {"--train.mixed_precision=fp32"}, kParityTolerance, kParityTolerance, 20, std::nullopt},
      {"bf16",
       {"--train.mixed_precision=bf16", "--checkpoint.interval=1", "--checkpoint.keep_last_n=0",
        "--train.grad_clip_norm=1e9"},
       kBf16LossTolerance,
       kBf16GradientTolerance,
       kBf16ParitySteps,
       kBf16GradientTolerance},
      {"fp16",
       {"--train.mixed_precision=fp16", "--checkpoint.interval=1", "--checkpoint.keep_last_n=0",
        "--train.grad_clip_norm=1e9"},
       kFp16LossTolerance,
       kFp16GradientTolerance,
       kFp16ParitySteps,
       kFp16GradientTolerance}};
  return precisions;
}

std::string precision_name(const ::testing::TestParamInfo<Precision>& info) { return info.param.name; }

void PrintTo(const Precision& precision, std::ostream* os) { *os << precision.name; }

void expect_parity(const TrainFixture& parallel, const TrainFixture& one, const Precision& precision) {
  using Compared = std::pair<std::string, double>;  // a metric and its tolerance
  for (const auto& [key, tolerance] : {Compared{"train/loss", precision.loss_tolerance},
                                       Compared{"train/grad_norm", precision.grad_norm_tolerance}}) {
    const auto a = metric(parallel, key), b = metric(one, key);
    expect_close(a, b, 1, precision.last_step, tolerance);
    double worst = 0;
    for (int64_t step = 1; step <= precision.last_step && a.count(step) && b.count(step); ++step) {
      worst = std::max(worst, std::abs(a.at(step) - b.at(step)) / std::max(1.0, std::abs(b.at(step))));
    }
    std::cout << "[measured] " << precision.name << " " << key << " against one rank's, steps 1 to "
              << precision.last_step << ": largest relative difference " << worst << " (tolerance " << tolerance
              << ")\n";
  }
  if (precision.step_one_gradient_tolerance) {
    // After one step a parameter has moved by at most lr (the fixture's 1e-2) either way: 2 lr apart at most. The
    // moments hold g and g^2 (twice g's relative difference).
    expect_same_logical_tensors(one.checkpoint_dir / "step_1", parallel.checkpoint_dir / "step_1", 2 * 1e-2,
                                2 * *precision.step_one_gradient_tolerance);
  }
}

}  // namespace kforge::test
