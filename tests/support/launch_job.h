// Running a TrainFixture job through `kforge launch` and reading back its per-step metrics, for the
// multi-process tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/train/train_fixture.h"

namespace kforge::test {

/// Tolerance of N-rank vs 1-rank losses: the same math, summed in a different order (fp32).
constexpr double kParityTolerance = 1e-5;

/// Tolerances of N-rank vs 1-rank losses and gradient norms under bf16 autocast (--train.mixed_precision=bf16),
/// relative (to max(1, |value|), as kParityTolerance), at steps 1 to kBf16ParitySteps. Rounding to bf16 (an 8-bit
/// significand) errs by at most u = 2^-8 relative. Both runs feed the same bf16-rounded operands to the same products
/// and accumulate in fp32 (oneDNN's bf16 GEMMs with avx512_bf16; without, bf16_linear's fp32 GEMM of the rounded
/// operands), so they part only where a layout changes a sum (pipeline and expert parallelism move activations
/// bit-exactly and change none). A sum's order (over ranks, not within one GEMM) changes an fp32 sum by ~1e-7:
/// negligible. Where a sum's parts are rounded to bf16 before the all-reduce and the sum again after (tensor
/// parallelism's row-parallel outputs and its column-parallel inputs' gradients; data parallelism's and FSDP's bf16
/// weight gradients), where one rank rounds p1 + p2 once, the two differ by at most u (|p1| + |p2|) + 2u |p1 + p2|: 3u
/// relative for parts that do not cancel. Counted on the fixture's two-block model, each difference carried on with
/// unit gain (RMSNorm divides a scale out; the residual stream adds the blocks' outputs; first order):
///  - the loss: the forward's 4 such sums (o_proj and the MLP's down projection, per block), 12u, and the head's
///    rounding of a logit whose input differs, one bf16 step (2u): 14u; we allow 16u = 2^-4.
///  - the gradient norm: the same 12u in the activations the weight gradients multiply, the backward's 4 sums (the
///    gradients of q/k/v's and gate/up's inputs) 12u, the weight gradients' own sum over ranks 3u: 27u; we allow 32u.
/// After step 1 the parameters differ by AdamW's updates, at most lr per element whatever a gradient's rounding, and
/// they move the loss by a gradient times that difference: second order where the gradients differ. Later steps
/// compound it, so only the first 3 steps are compared.
constexpr double kBf16LossTolerance = 16.0 / 256;
constexpr double kBf16GradNormTolerance = 32.0 / 256;
constexpr int64_t kBf16ParitySteps = 3;

/// Overrides for plain data parallelism over n ranks (dp_shard defaults to the whole world: FSDP).
std::vector<std::string> replicated_over(int n);
/// `kforge launch --nproc-per-node N ... -- run <fixture config> <overrides>` (writes the config).
std::string launch_command(const TrainFixture& fx, int nproc, const std::vector<std::string>& overrides);
/// Runs it; with no `output`, a non-zero exit is a test failure showing the launcher's output.
int launch(const TrainFixture& fx, int nproc, const std::vector<std::string>& overrides, std::string* output = nullptr);
/// Runs `command` (stderr merged) and sends `signal` to the pid its output names in a line
/// matching `pid_format` (a scanf format with one %d) once a checkpoint is committed; returns
/// the command's wait status and its whole output, which ends with a "[test] ... no signal was sent"
/// line when it never named the pid or never saved. Callers cap train.max_steps (2000), so a run
/// that is never signalled ends in seconds with that message instead of at CTest's timeout.
int signal_after_checkpoint(const std::string& command, const std::string& pid_format, int signal, std::string& output);
/// The job, with rank `victim` SIGKILLed once a checkpoint is committed.
int launch_and_kill_after_checkpoint(const TrainFixture& fx, int nproc, const std::vector<std::string>& overrides,
                                     int victim, std::string& output);
/// step -> value of `key` in the run's metrics.jsonl (a resumed run appends; later lines win).
std::map<int64_t, double> metric(const TrainFixture& fx, const std::string& key);
/// The same for any metrics.jsonl (e.g. another rank's, under [metrics] per_rank).
std::map<int64_t, double> metric(const std::filesystem::path& metrics_jsonl, const std::string& key);
/// a and b agree within `tolerance` (relative to max(1, |b|)) at every step in [from, to].
void expect_close(const std::map<int64_t, double>& a, const std::map<int64_t, double>& b, int64_t from, int64_t to,
                  double tolerance = kParityTolerance);
nlohmann::json read_json(const std::filesystem::path& path);

/// `args` followed by `more`.
std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more);
/// A parallel run's losses and gradient norms equal one rank's (expect_close) at every step in [from, to].
void expect_parity(const TrainFixture& parallel, const TrainFixture& one, int64_t from, int64_t to,
                   double tolerance = kParityTolerance);

/// A precision the parity tests run at: its [train] mixed_precision, and the tolerances of a parallel run's losses and
/// gradient norms against one rank's, compared from step 1 to last_step.
struct Precision {
  std::string name;
  double loss_tolerance, grad_norm_tolerance;
  int64_t last_step;
  /// The override that selects it.
  std::string flag() const { return "--train.mixed_precision=" + name; }
};
/// fp32 (kParityTolerance, every step of a 20-step run) and bf16 autocast (kBf16LossTolerance, kBf16GradNormTolerance,
/// kBf16ParitySteps):
/// the values of the parity tests parameterised by precision (INSTANTIATE_TEST_SUITE_P with precision_name).
const std::vector<Precision>& parity_precisions();
/// The test-name suffix of a Precision parameter: its name.
std::string precision_name(const ::testing::TestParamInfo<Precision>& info);
/// GoogleTest's printer of a Precision (a failure names its parameter): its name.
void PrintTo(const Precision& precision, std::ostream* os);
/// expect_close of the losses and the gradient norms at the precision's tolerances, from step 1 to its last step;
/// prints the largest relative differences as a measurement.
void expect_parity(const TrainFixture& parallel, const TrainFixture& one, const Precision& precision);

}  // namespace kforge::test
