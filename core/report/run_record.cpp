// Reading a run directory for the report (see run_record.h).
#include "report/run_record.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::report {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string run_record_slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<Json> run_record_json(const fs::path& path) {
  if (!fs::is_regular_file(path)) return std::nullopt;
  Json j = Json::parse(run_record_slurp(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// Calls read(json, number) for each non-blank line of a JSON-lines file; a line that is not JSON
// (torn by a crash) or that read() refuses (returns false) is added to `unreadable`.
template <typename Read>
void run_record_json_lines(const fs::path& path, std::vector<int64_t>& unreadable, Read read) {
  std::ifstream in(path);
  int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !read(j, number)) unreadable.push_back(number);
  }
}

bool run_record_has_step(const Json& j) { return j.is_object() && j.contains("step") && j["step"].is_number_integer(); }

double run_record_time(const Json& j) {
  return j.contains("time") && j["time"].is_number() ? j["time"].get<double>() : NAN;
}

// The lines of metrics.jsonl that are objects with an integer step.
void read_metric_lines(const fs::path& path, RunRecord& run) {
  run_record_json_lines(path, run.unreadable_lines, [&](const Json& j, int64_t) {
    if (!run_record_has_step(j)) return false;
    MetricLine m;
    m.step = j["step"].get<int64_t>();
    m.time = run_record_time(j);
    for (const auto& [key, value] : j.items()) {
      if (key == "step" || key == "time") continue;
      m.values[key] = value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN();
    }
    run.lines.push_back(std::move(m));
    return true;
  });
}

// runs.jsonl: each start line opens a process, the end line after it closes it.
void read_run_log(const fs::path& path, RunRecord& run) {
  run_record_json_lines(path, run.unreadable_run_log_lines, [&](const Json& j, int64_t number) {
    if (!run_record_has_step(j)) return false;
    const std::string event = j.value("event", Json()).is_string() ? j["event"].get<std::string>() : "";
    if (event == "start") {
      ProcessRecord p;
      p.line = number;
      p.start_time = run_record_time(j);
      p.start_step = j["step"].get<int64_t>();
      if (j.contains("resumed_from") && j["resumed_from"].is_number_integer()) {
        p.resumed_from = j["resumed_from"].get<int64_t>();
      }
      p.start = j;
      run.processes.push_back(std::move(p));
      return true;
    }
    if (event != "end" || run.processes.empty() || run.processes.back().end_time) return false;
    ProcessRecord& p = run.processes.back();
    p.end_time = run_record_time(j);
    p.end_step = j["step"].get<int64_t>();
    p.outcome = j.value("outcome", Json()).is_string() ? j["outcome"].get<std::string>() : "?";
    return true;
  });
}

void read_checkpoints(const fs::path& dir, RunRecord& run) {
  static const std::regex kStepDir("step_([0-9]+)");
  std::smatch match;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !std::regex_match(name, match, kStepDir)) continue;
    CheckpointRecord c;
    const std::string digits = match[1].str();
    // A number past int64 is no step kforge wrote: that folder is not a checkpoint.
    if (std::from_chars(digits.data(), digits.data() + digits.size(), c.step).ec != std::errc()) continue;
    const auto state = run_record_json(entry.path() / "train_state.json");
    if (state && state->is_object() && state->contains("tokens_seen") && (*state)["tokens_seen"].is_number_integer()) {
      c.tokens_seen = (*state)["tokens_seen"].get<int64_t>();
    }
    run.checkpoints.push_back(c);
  }
  std::sort(run.checkpoints.begin(), run.checkpoints.end(),
            [](const CheckpointRecord& a, const CheckpointRecord& b) { return a.step < b.step; });
}

// The config and plugin set of the newest checkpoint that has them.
void read_newest_config(const fs::path& dir, RunRecord& run) {
  for (auto c = run.checkpoints.rbegin(); c != run.checkpoints.rend(); ++c) {
    const fs::path step_dir = dir / ("step_" + std::to_string(c->step));
    if (run.config_path.empty() && fs::is_regular_file(step_dir / "config.toml")) {
      run.config_path = step_dir / "config.toml";
      run.config_text = run_record_slurp(run.config_path);
    }
    if (run.plugins.is_null()) {
      if (const auto meta = run_record_json(step_dir / "metadata.json"); meta && meta->is_object()) {
        run.plugins = meta->value("plugins", Json());
      }
    }
  }
  if (run.config_path.empty()) return;
  try {
    static_cast<void>(toml::parse(run.config_text, run.config_path.string()));
  } catch (const toml::parse_error& e) {
    run.config_error = e.what();
  }
}

}  // namespace

RunRecord read_run_record(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw sdk::Error(dir.string() + " is not a directory: pass a run directory (checkpoint.dir or metrics.run_dir)");
  }
  RunRecord run;
  run.dir = dir;
  const fs::path metrics = dir / "metrics.jsonl";
  run.has_metrics_file = fs::is_regular_file(metrics);
  if (run.has_metrics_file) read_metric_lines(metrics, run);
  const fs::path run_log = dir / "runs.jsonl";
  run.has_run_log = fs::is_regular_file(run_log);
  if (run.has_run_log) read_run_log(run_log, run);
  read_checkpoints(dir, run);
  if (!run.has_metrics_file && run.checkpoints.empty()) {
    throw sdk::Error(dir.string() +
                     " holds neither metrics.jsonl nor a step_N checkpoint: pass a run directory "
                     "(checkpoint.dir or metrics.run_dir) of a run that has started");
  }
  read_newest_config(dir, run);
  return run;
}

std::map<int64_t, double> metric_series(const RunRecord& run, const std::string& name) {
  std::map<int64_t, double> series;
  for (const MetricLine& line : run.lines) {
    if (const auto it = line.values.find(name); it != line.values.end()) series[line.step] = it->second;
  }
  return series;
}

std::vector<std::string> metric_names(const RunRecord& run) {
  std::set<std::string> names;
  for (const MetricLine& line : run.lines) {
    for (const auto& entry : line.values) names.insert(entry.first);
  }
  return {names.begin(), names.end()};
}

}  // namespace kforge::report
