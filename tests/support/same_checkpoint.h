// Comparing a checkpoint written by a parallel layout with one rank's: the same logical tensors.
#pragma once

#include <filesystem>

#include "support/launch_job.h"

namespace kforge::test {

/// Tolerance of a parallel run's optimizer state against one rank's after the same steps, relative to each tensor's
/// largest magnitude. The runs' gradients are the same math summed in another order (fp32), and agree at every step
/// within kParityTolerance, relative (expect_parity's gradient norms); exp_avg averages them, and exp_avg_sq averages
/// their squares, which doubles a relative difference. Measured: at most 2.4e-6 over the TP, PP and EP checkpoints
/// (tp x dp_shard, pp = 2, ep = 2 and ep x tp; 10 and 20 steps); a slice's state written from the wrong rank or stage
/// differs by its whole magnitude.
constexpr double kOptimizerStateTolerance = 2 * kParityTolerance;

/// The checkpoints at `a` and `b` hold the same model tensors (names, shapes, values within `tolerance`) and the same
/// optimizer state: names and shapes; integer entries (step counts) exactly; floating-point ones (moments) within
/// `optimizer_tolerance` of each tensor's own largest magnitude (exp_avg_sq is ~1e-8, where an absolute tolerance
/// would accept anything). What a sharded layout writes equals what one rank writes. Prints the largest relative
/// difference of the moments as a measurement.
void expect_same_logical_tensors(const std::filesystem::path& a, const std::filesystem::path& b, double tolerance,
                                 double optimizer_tolerance);

}  // namespace kforge::test
