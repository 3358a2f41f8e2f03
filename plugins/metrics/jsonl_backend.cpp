// jsonl: appends one JSON object per logging step to <run_dir>/metrics.jsonl (rank 0; every rank with
// [metrics] per_rank, each in its own run_dir); on a resume it first drops the lines of steps after
// the resumed one, so no step is there twice.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "backends.h"

namespace kforge::builtin::metrics {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keys in logging order: step, time, then the metrics

// Rewrites `path` with only its lines of steps <= last_step (a torn or unparsable line goes too);
// returns how many lines were dropped.
int64_t keep_steps_up_to(const fs::path& path, int64_t last_step) {
  std::ifstream in(path);
  std::string kept;
  int64_t dropped = 0;
  for (std::string line; std::getline(in, line);) {
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool keep =
        j.is_object() && j.contains("step") && j["step"].is_number_integer() && j["step"].get<int64_t>() <= last_step;
    if (keep) {
      kept += line + "\n";
    } else {
      ++dropped;
    }
  }
  if (dropped == 0) return 0;
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream out(tmp, std::ios::trunc);
  out << kept;
  out.close();
  if (!out) throw sdk::Error("metrics backend jsonl: cannot write " + tmp.string() + " (disk full or read-only?)");
  fs::rename(tmp, path);
  return dropped;
}

class JsonlBackend final : public sdk::MetricBackend {
 public:
  explicit JsonlBackend(const fs::path& path) : out_(path, std::ios::app) {
    if (!out_) throw sdk::Error("metrics backend jsonl: cannot open " + path.string() + " for appending");
  }

  void log(int64_t step, const sdk::MetricList& metrics) override {
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    Json line = {{"step", step}, {"time", now}};
    for (const auto& [k, v] : metrics) line[k] = v;  // NaN and Inf are written as null
    // A metric name that is not UTF-8 is written with U+FFFD rather than failing the run.
    out_ << line.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    out_.flush();  // a crash loses nothing already logged
  }

 private:
  std::ofstream out_;
};

}  // namespace

std::unique_ptr<sdk::MetricBackend> make_jsonl(const sdk::BuildContext& ctx, const sdk::RunInfo& run) {
  if (run.rank != 0 && !run.per_rank) return std::make_unique<NullBackend>();
  fs::create_directories(run.run_dir);
  const fs::path path = fs::path(run.run_dir) / "metrics.jsonl";
  if (const int64_t dropped = keep_steps_up_to(path, run.resumed_step); dropped > 0) {
    ctx.log.info(path.string() + ": dropped " + std::to_string(dropped) + " line(s) of steps after " +
                 std::to_string(run.resumed_step) + ", where this run continues");
  }
  return std::make_unique<JsonlBackend>(path);
}

}  // namespace kforge::builtin::metrics
