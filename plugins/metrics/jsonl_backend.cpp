// jsonl: appends one JSON object per logging step to <run_dir>/metrics.jsonl (rank 0 only).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "backends.h"

namespace kforge::metrics_plugin {
namespace {

std::string number(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN/Inf
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

class JsonlBackend final : public sdk::MetricBackend {
 public:
  explicit JsonlBackend(const std::filesystem::path& path) : out_(path, std::ios::app) {
    if (!out_) throw sdk::Error("metrics backend jsonl: cannot open " + path.string() + " for appending");
  }

  void log(int64_t step, const sdk::MetricList& metrics) override {
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string line = "{\"step\": " + std::to_string(step) + ", \"time\": " + number(now);
    for (const auto& [k, v] : metrics) line += ", \"" + escape(k) + "\": " + number(v);
    out_ << line << "}\n";
    out_.flush();  // a crash loses nothing already logged
  }

 private:
  std::ofstream out_;
};

class NullBackend final : public sdk::MetricBackend {
 public:
  void log(int64_t, const sdk::MetricList&) override {}
};

}  // namespace

std::unique_ptr<sdk::MetricBackend> make_jsonl(const sdk::BuildContext&, const sdk::RunInfo& run) {
  if (run.rank != 0) return std::make_unique<NullBackend>();
  std::filesystem::create_directories(run.run_dir);
  return std::make_unique<JsonlBackend>(std::filesystem::path(run.run_dir) / "metrics.jsonl");
}

}  // namespace kforge::metrics_plugin
