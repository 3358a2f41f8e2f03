// The fault suite's tiny training job (a 2-block model on a cyclic corpus, a checkpoint at every
// step) run as `kforge run` (world 1) or `kforge launch` with FSDP over 2 ranks, and what the suite
// reads back: the checkpoints that load, the loss per step, the step a run resumed from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job_process.h"

namespace kforge::test {

using FaultEnv = std::vector<std::pair<std::string, std::string>>;

class FaultJob {
 public:
  /// A fresh directory with the corpus and the config; `world` 1 runs `kforge run`, 2 `kforge launch`
  /// with distributed.dp_shard = 2. Checkpoints every step into `checkpoints`, metrics into `metrics`.
  FaultJob(const std::string& label, int world, int64_t max_steps);

  /// The command line, with `overrides` (--section.key=value) appended to the worker's.
  std::vector<std::string> command(const std::vector<std::string>& overrides = {}) const;
  /// Runs it (see run_job); the launcher gives the other ranks 2 s between SIGTERM and SIGKILL.
  JobEnd run(const FaultEnv& env = {}, const JobWatch& watch = {}, const std::vector<std::string>& overrides = {},
             double timeout_sec = 120) const;

  std::filesystem::path root, checkpoints, metrics;
  int world;
  int64_t max_steps;
};

/// The path of the I/O fault shim (LD_PRELOAD), with its variables (see io_fault_shim.cpp).
FaultEnv io_fault_env(const FaultEnv& settings);

/// The newest step directory of `checkpoints` that loads completely (every file's size and checksum
/// verified), nullopt when none does.
std::optional<int64_t> newest_complete_step(const std::filesystem::path& checkpoints);

/// step -> train/loss in <metrics>/metrics.jsonl; a step logged twice, an unreadable line or a step
/// without a loss is described in *problem.
std::map<int64_t, double> losses_by_step(const std::filesystem::path& metrics, std::string* problem);

/// The step a run's output says it resumed from ("resumed from step N"), 0 for "starting from
/// scratch", nullopt when it says neither.
std::optional<int64_t> resumed_step(const std::string& output);

/// The step of the first " [step N] " console line in `output`.
std::optional<int64_t> first_logged_step(const std::string& output);

/// Prints one parseable result line: "[ fault    ] <text>".
void report_fault(const std::string& text);

}  // namespace kforge::test
