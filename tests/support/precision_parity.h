// A parallel run against one rank's at a precision: fp32, or bf16 or fp16 with tolerances derived from their rounding.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/train/train_fixture.h"

namespace kforge::test {

/// Tolerances of N-rank vs 1-rank results under bf16 autocast (--train.mixed_precision=bf16) and under fp16
/// (--train.mixed_precision=fp16, dynamic loss scaling). Rounding to a format with a p-bit significand (the implicit
/// bit counted) errs by at most u = 2^-p relative: bf16's 8 bits, u = 2^-8; fp16's 11 bits, u = 2^-11. Both runs feed
/// the same rounded operands to the same products and accumulate in fp32 (bf16: oneDNN's bf16 GEMMs with avx512_bf16;
/// without, bf16_linear's fp32 GEMM of the rounded operands; fp16: fp16_linear's fp32 GEMM of the rounded operands, its
/// output rounded), so they part only where a layout changes a sum (pipeline and expert parallelism move activations
/// bit-exactly and change none). A sum's order (over ranks, not within one GEMM) changes an fp32 sum by ~1e-7:
/// negligible. Where a sum's parts are rounded before the all-reduce and the sum again after (tensor parallelism's
/// row-parallel outputs and its column-parallel inputs' gradients; data parallelism's and FSDP's weight gradients;
/// fp16's parts are summed in fp32 and not rounded again, one term fewer), where one rank rounds p1 + p2 once, the two
/// differ by at most u (|p1| + |p2|) + 2u |p1 + p2|: 3u relative for parts that do not cancel. Counted on the
/// fixture's two-block model, each difference carried on with unit gain (RMSNorm divides a scale out; the residual
/// stream adds the blocks' outputs; first order):
///  - the loss: the forward's 4 such sums (o_proj and the MLP's down projection, per block), 12u, and the head's
///    rounding of a logit whose input differs, one step of the format (2u): 14u; we allow 16u (relative to
///    max(1, |loss|), as kParityTolerance): 2^-4 for bf16, 2^-7 for fp16.
///  - a weight's gradient, relative to its largest element: the same 12u in the activations it multiplies, the
///    backward's 4 sums (the gradients of q/k/v's and gate/up's inputs) 12u, its own sum over ranks 3u: 27u; we
///    allow 32u (2^-3 for bf16, 2^-6 for fp16), and so for the gradient norm.
/// fp16's narrower range adds no term: its loss scale (a power of two, exact) keeps the gradients inside it, a value
/// below its normal range (2^-14) errs by at most 2^-25 absolute, negligible against the loss and a gradient's largest
/// element, and a step with an overflow is skipped on every rank of a run alike.
/// At step 1 both runs start from the same parameters; after it the parameters differ by AdamW's updates, at most lr
/// per element whatever a gradient's rounding, and they move the loss by a gradient times that difference: second
/// order where the gradients differ. Later steps compound it, so the losses and gradient norms are compared at steps
/// 1 to 3 only, and each tensor's gradient at step 1 (AdamW's first moment after one step is (1 - beta1) g, its
/// second (1 - beta2) g^2, whose relative difference is twice g's).
constexpr double kBf16Unit = 1.0 / 256;
constexpr double kBf16LossTolerance = 16 * kBf16Unit;
constexpr double kBf16GradientTolerance = 32 * kBf16Unit;
constexpr int64_t kBf16ParitySteps = 3;
constexpr double kFp16Unit = 1.0 / 2048;
constexpr double kFp16LossTolerance = 16 * kFp16Unit;
constexpr double kFp16GradientTolerance = 32 * kFp16Unit;
constexpr int64_t kFp16ParitySteps = 3;

/// A precision the parity tests run at: the overrides that select it, and the tolerances of a parallel run's losses
/// and gradient norms against one rank's, compared from step 1 to last_step; for bf16 and fp16 also each tensor's
/// gradient at step 1 (the checkpoints written after it: its runs save every step, keep them all and do not clip
/// gradients, so AdamW's moments hold the gradients themselves).
struct Precision {
  std::string name;
  std::vector<std::string> overrides;
  double loss_tolerance, grad_norm_tolerance;
  int64_t last_step;
  std::optional<double> step_one_gradient_tolerance;
};

/// fp32 (kParityTolerance at every step of a 20-step run), bf16 autocast and fp16 (the tolerances above), in that
/// order: the values of the parity tests parameterised by precision (INSTANTIATE_TEST_SUITE_P with precision_name).
const std::vector<Precision>& parity_precisions();
/// The test-name suffix of a Precision parameter: its name.
std::string precision_name(const ::testing::TestParamInfo<Precision>& info);
/// GoogleTest's printer of a Precision (a failure names its parameter): its name.
void PrintTo(const Precision& precision, std::ostream* os);
/// The parallel run's losses and gradient norms against one rank's at the precision's tolerances, from step 1 to its
/// last step, and for bf16 and fp16 the step-1 checkpoints' tensors (expect_same_logical_tensors); prints the largest
/// relative differences as a measurement.
void expect_parity(const TrainFixture& parallel, const TrainFixture& one, const Precision& precision);

}  // namespace kforge::test
