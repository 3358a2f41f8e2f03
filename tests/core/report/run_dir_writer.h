// Hand-written run directories for the report tests: files, metric lines and step_N checkpoints.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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

/// step_N/ with train_state.json (tokens, NaN total) and, when given, config.toml.
inline void write_checkpoint(const std::filesystem::path& run_dir, int64_t step, int64_t nan_total,
                             const std::string& config_toml = "") {
  const auto dir = run_dir / ("step_" + std::to_string(step));
  write_text(
      dir / "train_state.json",
      nlohmann::json{{"step", step}, {"tokens_seen", step * 64}, {"nan", {{"consecutive", 0}, {"total", nan_total}}}}
          .dump());
  if (!config_toml.empty()) write_text(dir / "config.toml", config_toml);
}

/// step_N/commit.json, last modified at `time` (s since the epoch): when the save ended.
inline void write_commit(const std::filesystem::path& run_dir, int64_t step, double time) {
  const auto path = run_dir / ("step_" + std::to_string(step)) / "commit.json";
  write_text(path, "{}");
  const timespec at{static_cast<time_t>(time),
                    static_cast<long>((time - static_cast<double>(static_cast<time_t>(time))) * 1e9)};
  const timespec times[2] = {at, at};
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

}  // namespace kforge::test
