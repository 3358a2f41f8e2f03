// MetricsTracker: per-step timing, throughput, MFU and memory, EMA-smoothed, fanned out to the
// metric backend plugins every log_interval steps.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/metric_backend.h"

namespace kforge::metrics {

struct StepStats {
  int64_t step = 0;
  double loss = 0, grad_norm = 0, lr = 0;
  int64_t tokens = 0;     ///< tokens this step trained on (labels != -100, all ranks): tokens/s and MFU count these
  sdk::MetricList extra;  ///< more of this step's metrics, logged in its line when it is a log step
};

class MetricsTracker {
 public:
  /// flops_per_token for MFU; peak_tflops is the total over all devices of the run (0: no MFU).
  /// MFU is logged as a fraction (train/mfu, smoothed/mfu in 0..1), never clamped: a value above 1
  /// means the peak is wrong, and is warned about once. `host_memory`: the run's tensors live in host memory (a CPU
  /// run), so KempnerForge's device memory names have a meaning and are logged beside memory/peak_rss_gb:
  /// gpu/allocated_gb (the current resident memory), gpu/peak_gb (the peak, = memory/peak_rss_gb) and
  /// gpu/mem_utilization (the peak over the machine's physical memory); gpu/reserved_gb (a CUDA allocator's cache)
  /// has none.
  MetricsTracker(std::vector<std::unique_ptr<sdk::MetricBackend>> backends, int64_t log_interval,
                 double flops_per_token, double peak_tflops, bool host_memory);

  void start_step();
  /// Records a finished step; logs (train/*, smoothed/*, memory, then stats.extra) in one line when
  /// step % log_interval == 0 or step == 1.
  void end_step(const StepStats& stats);
  /// Whether end_step logs at this step.
  bool is_log_step(int64_t step) const { return step % log_interval_ == 0 || step == 1; }
  /// Logs arbitrary metrics now (eval results, ...).
  void log(int64_t step, const sdk::MetricList& metrics);
  void flush();
  /// Each backend's run_id(), in the order of the backends given.
  std::vector<std::string> run_ids() const;
  /// Tells every backend the run ended (once; a backend that throws is logged, not propagated).
  void end(sdk::RunEnd how) noexcept;

 private:
  std::vector<std::unique_ptr<sdk::MetricBackend>> backends_;
  int64_t log_interval_;
  double flops_per_token_, peak_tflops_;
  bool host_memory_;
  std::chrono::steady_clock::time_point step_start_;
  bool smoothed_seeded_ = false;
  bool warned_mfu_above_peak_ = false;
  bool ended_ = false;
  double ema_loss_ = 0, ema_tokens_per_sec_ = 0, ema_mfu_ = 0, ema_step_time_ = 0;
};

}  // namespace kforge::metrics
