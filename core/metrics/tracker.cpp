// Step timing, throughput, MFU and their EMAs, fanned out to the backends (see tracker.h).
#include "metrics/tracker.h"

#include <algorithm>

#include "log/log.h"
#include "metrics/memory.h"

namespace kforge::metrics {
namespace {
constexpr double kAlpha = 0.1;  // KempnerForge's EMA weight of the newest value
}

MetricsTracker::MetricsTracker(std::vector<std::unique_ptr<sdk::MetricBackend>> backends, int64_t log_interval,
                               double flops_per_token, double peak_tflops, bool host_memory)
    : backends_(std::move(backends)),
      log_interval_(log_interval),
      flops_per_token_(flops_per_token),
      peak_tflops_(peak_tflops),
      host_memory_(host_memory) {}

void MetricsTracker::start_step() { step_start_ = std::chrono::steady_clock::now(); }

void MetricsTracker::end_step(const StepStats& s) {
  const double step_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start_).count();
  const double tokens_per_sec = step_time > 0 ? static_cast<double>(s.tokens) / step_time : 0.0;
  const double mfu = peak_tflops_ > 0 ? flops_per_token_ * tokens_per_sec / (peak_tflops_ * 1e12) : 0.0;
  if (mfu > 1 && !warned_mfu_above_peak_) {
    warned_mfu_above_peak_ = true;
    log::get().warn("step {}: MFU {:.1f}% exceeds 100%: the MFU peak ({:.1f} GFLOP/s over the ranks, logged at "
                    "start-up) is too low for this machine; set [metrics] peak_tflops to its real peak per rank",
                    s.step, mfu * 100, peak_tflops_ * 1e3);
  }
  if (!smoothed_seeded_) {
    ema_loss_ = s.loss, ema_tokens_per_sec_ = tokens_per_sec, ema_mfu_ = mfu, ema_step_time_ = step_time;
    smoothed_seeded_ = true;
  } else {
    ema_loss_ = kAlpha * s.loss + (1 - kAlpha) * ema_loss_;
    ema_tokens_per_sec_ = kAlpha * tokens_per_sec + (1 - kAlpha) * ema_tokens_per_sec_;
    ema_mfu_ = kAlpha * mfu + (1 - kAlpha) * ema_mfu_;
    ema_step_time_ = kAlpha * step_time + (1 - kAlpha) * ema_step_time_;
  }
  if (!is_log_step(s.step)) return;
  // getrusage's peak lags /proc's current resident size by the kernel's per-CPU counter batches: a peak is never
  // below the current size.
  const double rss = current_rss_gib();
  const double peak_rss = std::max(peak_rss_gib(), rss);
  sdk::MetricList line{{"train/loss", s.loss},
                       {"train/grad_norm", s.grad_norm},
                       {"train/lr", s.lr},
                       {"train/tokens_per_sec", tokens_per_sec},
                       {"train/mfu", mfu},
                       {"train/step_time_sec", step_time},
                       {"memory/peak_rss_gb", peak_rss},
                       {"smoothed/loss", ema_loss_},
                       {"smoothed/tokens_per_sec", ema_tokens_per_sec_},
                       {"smoothed/mfu", ema_mfu_},
                       {"smoothed/step_time", ema_step_time_}};
  if (host_memory_) {  // KempnerForge's names for the memory the tensors live in (see tracker.h)
    line.insert(line.end(), {{"gpu/allocated_gb", rss},
                             {"gpu/peak_gb", peak_rss},
                             {"gpu/mem_utilization", peak_rss / physical_memory_gib()}});
  }
  line.insert(line.end(), s.extra.begin(), s.extra.end());
  log(s.step, line);
}

void MetricsTracker::log(int64_t step, const sdk::MetricList& metrics) {
  for (auto& backend : backends_) backend->log(step, metrics);
}

void MetricsTracker::flush() {
  for (auto& backend : backends_) backend->flush();
}

std::vector<std::string> MetricsTracker::run_ids() const {
  std::vector<std::string> ids;
  for (const auto& backend : backends_) ids.push_back(backend->run_id());
  return ids;
}

void MetricsTracker::end(sdk::RunEnd how) noexcept {
  if (ended_) return;
  ended_ = true;
  for (auto& backend : backends_) {
    try {
      backend->end(how);
    } catch (const std::exception& e) {
      log::get().warn("a metric backend failed to record the end of the run: {}", e.what());
    }
  }
}

}  // namespace kforge::metrics
