// console: one human-readable line per logging step on stdout (rank 0 only), stamped with the local
// time to the millisecond as the host's log lines are.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "backends.h"

namespace kforge::builtin::metrics {
namespace {

// "2026-12-01 18:07:41.459": the host log's timestamp format.
std::string local_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char buf[32];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &local);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03d", static_cast<int>(millis));
  return buf;
}

const double* find(const sdk::MetricList& metrics, const std::string& key) {
  for (const auto& [k, v] : metrics) {
    if (k == key) return &v;
  }
  return nullptr;
}

class ConsoleBackend final : public sdk::MetricBackend {
 public:
  ConsoleBackend(bool enabled, bool interactive) : enabled_(enabled), interactive_(interactive) {}

  void log(int64_t step, const sdk::MetricList& metrics) override {
    if (!enabled_) return;
    std::string line = local_timestamp() + " [step " + std::to_string(step) + "]";
    if (const double* loss = find(metrics, "train/loss")) {
      char buf[256];
      std::snprintf(buf, sizeof(buf), " loss=%.4f | lr=%.3e | grad_norm=%.3f | tok/s=%.0f | mfu=%.1f%% | mem=%.2fGB | "
                    "step_time=%.3fs",
                    *loss, value(metrics, "train/lr"), value(metrics, "train/grad_norm"),
                    value(metrics, "train/tokens_per_sec"), 100 * value(metrics, "train/mfu"),
                    value(metrics, "memory/peak_rss_gb"), value(metrics, "train/step_time_sec"));
      line += buf;
    } else {
      for (const auto& [k, v] : metrics) {
        char buf[128];
        std::snprintf(buf, sizeof(buf), " %s=%.4f", k.c_str(), v);
        line += buf;
      }
    }
    // On a terminal the host may be showing a status line on stderr: erase it first.
    if (interactive_) std::fputs("\r\033[K", stderr);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  static double value(const sdk::MetricList& metrics, const std::string& key) {
    const double* v = find(metrics, key);
    return v != nullptr ? *v : 0.0;
  }
  bool enabled_;
  bool interactive_;
};

}  // namespace

std::unique_ptr<sdk::MetricBackend> make_console(const sdk::BuildContext&, const sdk::RunInfo& run) {
  return std::make_unique<ConsoleBackend>(run.rank == 0, run.interactive);
}

}  // namespace kforge::builtin::metrics
