// What a run directory holds, read for the report: the lines of metrics.jsonl and runs.jsonl, and the
// step_N checkpoints (their train_state.json, the newest one's config.toml and plugin set).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::report {

/// One line of metrics.jsonl: its step, wall-clock time (s since the epoch; NaN if absent) and
/// metrics; a null (NaN/Inf when logged) or non-number value is NaN here.
struct MetricLine {
  int64_t step = 0;
  double time = 0;
  std::map<std::string, double> values;
};

/// A step_N directory; tokens_seen is its train_state.json's (absent if unreadable).
struct CheckpointRecord {
  int64_t step = 0;
  std::optional<int64_t> tokens_seen;
};

/// One training process of runs.jsonl: its start line and, when it wrote one, its end line.
struct ProcessRecord {
  int64_t line = 0;                     ///< the start's 1-based line in runs.jsonl
  double start_time = 0;                ///< s since the epoch; NaN if absent
  int64_t start_step = 0;               ///< where training continued
  std::optional<int64_t> resumed_from;  ///< the checkpoint's step (absent: a fresh start)
  nlohmann::json start;                 ///< the whole start line (world_size, kforge, host, pid, environment ...)
  std::optional<double> end_time;       ///< absent with no end line (it crashed, or is still running); NaN if absent
  int64_t end_step = 0;
  std::string outcome;  ///< the end's: "finished", "stopped", "killed", "failed" or "too_many_nans" ("" with no end)
};

struct RunRecord {
  std::filesystem::path dir;
  bool has_metrics_file = false;
  std::vector<MetricLine> lines;                  ///< metrics.jsonl in file order
  std::vector<int64_t> unreadable_lines;          ///< 1-based numbers of lines skipped (torn, not JSON, no step)
  bool has_run_log = false;                       ///< runs.jsonl exists (older kforge versions wrote none)
  std::vector<ProcessRecord> processes;           ///< runs.jsonl's processes in file order
  std::vector<int64_t> unreadable_run_log_lines;  ///< 1-based numbers of its lines skipped (torn, not JSON, not a
                                                  ///< start or end with an integer step, an end with no start)
  std::vector<CheckpointRecord> checkpoints;      ///< ascending step
  std::filesystem::path config_path;              ///< the newest checkpoint's config.toml ("" if none)
  std::string config_text;                        ///< its text
  std::string config_error;                       ///< why it did not parse as TOML ("" if it did or there is none)
  nlohmann::json plugins;                         ///< the newest checkpoint's metadata.json "plugins" (null if none)
};

/// Reads `dir`. Throws sdk::Error when it is not a directory, or holds neither metrics.jsonl nor a
/// step_N checkpoint. An empty metrics.jsonl or runs.jsonl, or a torn last line, is no error.
RunRecord read_run_record(const std::filesystem::path& dir);

/// step -> value of `name` over the lines that hold it (a later line of the same step wins); the
/// values may be NaN.
std::map<int64_t, double> metric_series(const RunRecord& run, const std::string& name);

/// Every metric name in the lines, sorted.
std::vector<std::string> metric_names(const RunRecord& run);

}  // namespace kforge::report
