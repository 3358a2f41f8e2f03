// Running a TrainFixture job through `kforge launch` and reading back its per-step metrics, for the
// multi-process tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/train/train_fixture.h"

namespace kforge::test {

/// Tolerance of N-rank vs 1-rank losses: the same math, summed in a different order (fp32).
constexpr double kParityTolerance = 1e-5;

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
void expect_parity(const TrainFixture& parallel, const TrainFixture& one, int64_t from, int64_t to);

}  // namespace kforge::test
