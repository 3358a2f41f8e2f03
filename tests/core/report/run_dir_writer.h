// Hand-written run directories for the report tests: files, metric lines, runs.jsonl lines and step_N
// checkpoints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_host.h"
#include "train/run_log.h"

namespace kforge::test {

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// One metrics.jsonl line: {"step", "time", ...metrics}.
inline std::string metric_line(int64_t step, double time, const nlohmann::json& metrics) {
  nlohmann::ordered_json line = {{"step", step}, {"time", time}};
  for (const auto& [k, v] : metrics.items()) line[k] = v;
  return line.dump() + "\n";
}

/// One runs.jsonl start line as the trainer writes it (train::run_start_event; resumed_from < 0: a
/// fresh start), started at `time`, with `patch` merged in (e.g. {"host": ..., "environment": {...}}).
inline std::string run_start_line(int64_t step, int64_t resumed_from, double time, const nlohmann::json& patch = {}) {
  nlohmann::json line = train::run_start_event(step, resumed_from, 1, nlohmann::json::array());
  line["time"] = time;
  if (!patch.is_null()) line.merge_patch(patch);
  return line.dump() + "\n";
}

/// One runs.jsonl end line as the trainer writes it (train::run_end_event), at `time`.
inline std::string run_end_line(int64_t step, const std::string& outcome, double time) {
  nlohmann::json line = train::run_end_event(step, outcome);
  line["time"] = time;
  return line.dump() + "\n";
}

/// step_N/ with train_state.json (its tokens seen) and, when given, config.toml.
inline void write_checkpoint(const std::filesystem::path& run_dir, int64_t step, const std::string& config_toml = "") {
  const auto dir = run_dir / ("step_" + std::to_string(step));
  write_text(
      dir / "train_state.json",
      nlohmann::json{{"step", step}, {"tokens_seen", step * 64}, {"nan", {{"consecutive", 0}, {"total", 0}}}}.dump());
  if (!config_toml.empty()) write_text(dir / "config.toml", config_toml);
}

}  // namespace kforge::test

// The report tests live in kforge::report and use these unqualified.
namespace kforge::report {
using test::metric_line;
using test::run_end_line;
using test::run_start_line;
using test::temp_dir;
using test::write_checkpoint;
using test::write_text;
}  // namespace kforge::report
