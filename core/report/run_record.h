// What a run directory holds, read for the report: the lines of metrics.jsonl and the step_N
// checkpoints (their train_state.json, the newest one's config.toml and plugin set).
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

/// A step_N directory; the counters are those of its train_state.json (absent if unreadable).
struct CheckpointRecord {
  int64_t step = 0;
  std::optional<int64_t> tokens_seen;
  std::optional<int64_t> nan_total;
  std::optional<double> committed_at;  ///< commit.json's modification time (s since the epoch): when the save ended
};

struct RunRecord {
  std::filesystem::path dir;
  bool has_metrics_file = false;
  std::vector<MetricLine> lines;              ///< metrics.jsonl in file order
  std::vector<int64_t> unreadable_lines;      ///< 1-based numbers of lines skipped (torn, not JSON, no step)
  std::vector<CheckpointRecord> checkpoints;  ///< ascending step
  std::filesystem::path config_path;          ///< the newest checkpoint's config.toml ("" if none)
  std::string config_text;                    ///< its text
  std::string config_error;                   ///< why it did not parse as TOML ("" if it did or there is none)
  std::optional<int64_t> log_interval;        ///< [metrics] log_interval of that config
  std::optional<int64_t> num_threads;         ///< [train] num_threads of that config
  nlohmann::json plugins;                     ///< the newest checkpoint's metadata.json "plugins" (null if none)
};

/// Reads `dir`. Throws sdk::Error when it is not a directory, or holds neither metrics.jsonl nor a
/// step_N checkpoint. An empty metrics.jsonl or a torn last line is no error.
RunRecord read_run_record(const std::filesystem::path& dir);

/// step -> value of `name` over the lines that hold it (a later line of the same step wins); the
/// values may be NaN.
std::map<int64_t, double> metric_series(const RunRecord& run, const std::string& name);

/// Every metric name in the lines, sorted.
std::vector<std::string> metric_names(const RunRecord& run);

}  // namespace kforge::report
