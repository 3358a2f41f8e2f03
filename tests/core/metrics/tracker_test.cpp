// MetricsTracker: it logs at step 1 and every log_interval-th step, smooths with KempnerForge's EMA
// (weight 0.1 on the newest step), fans logs and flushes out to every backend, and logs MFU as a
// fraction of the peak (never clamped), warning once about a value above 1; it hands out the backends'
// run ids in order and tells each backend once how the run ended; a CPU run also logs KempnerForge's memory names.
#include "metrics/tracker.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::metrics {
namespace {

struct Recorded {
  std::vector<int64_t> steps;
  std::vector<std::map<std::string, double>> lines;
  int flushes = 0;
};

class RecordingBackend final : public sdk::MetricBackend {
 public:
  explicit RecordingBackend(Recorded& out) : out_(out) {}
  void log(int64_t step, const sdk::MetricList& metrics) override {
    out_.steps.push_back(step);
    out_.lines.emplace_back(metrics.begin(), metrics.end());
  }
  void flush() override { ++out_.flushes; }

 private:
  Recorded& out_;
};

MetricsTracker tracker(Recorded& out, double flops_per_token, double peak_tflops, int64_t log_interval = 1,
                       bool host_memory = false) {
  std::vector<std::unique_ptr<sdk::MetricBackend>> backends;
  backends.push_back(std::make_unique<RecordingBackend>(out));
  return MetricsTracker(std::move(backends), log_interval, flops_per_token, peak_tflops, host_memory);
}

void train_step(MetricsTracker& t, int64_t step, double loss) {
  t.start_step();
  t.end_step({step, loss, /*grad_norm=*/1.0, /*lr=*/1e-3, /*tokens=*/1000});
}

TEST(Tracker, LogsAtStepOneAndEveryLogIntervalThStep) {
  Recorded out;
  MetricsTracker t = tracker(out, 1e6, 1e9, /*log_interval=*/3);
  for (int64_t step = 1; step <= 7; ++step) train_step(t, step, 2.0);
  EXPECT_EQ(out.steps, (std::vector<int64_t>{1, 3, 6}));
  for (int64_t step : {1, 3, 6, 9}) EXPECT_TRUE(t.is_log_step(step)) << step;
  for (int64_t step : {2, 4, 5, 7}) EXPECT_FALSE(t.is_log_step(step)) << step;
}

TEST(Tracker, LogsTheStepsValuesAndSmoothsTheLossWithWeightOneTenthOnTheNewest) {
  Recorded out;
  MetricsTracker t = tracker(out, 1e6, 1e9);
  train_step(t, 1, 4.0);
  train_step(t, 2, 2.0);
  train_step(t, 3, 1.0);
  ASSERT_EQ(out.lines.size(), 3u);
  EXPECT_DOUBLE_EQ(out.lines[0].at("smoothed/loss"), 4.0);  // the first step seeds the EMA
  EXPECT_DOUBLE_EQ(out.lines[1].at("smoothed/loss"), 0.1 * 2.0 + 0.9 * 4.0);
  EXPECT_DOUBLE_EQ(out.lines[2].at("smoothed/loss"), 0.1 * 1.0 + 0.9 * (0.1 * 2.0 + 0.9 * 4.0));
  const auto& last = out.lines[2];
  EXPECT_DOUBLE_EQ(last.at("train/loss"), 1.0);
  EXPECT_DOUBLE_EQ(last.at("train/grad_norm"), 1.0);
  EXPECT_DOUBLE_EQ(last.at("train/lr"), 1e-3);
  EXPECT_GT(last.at("train/step_time_sec"), 0.0);
  EXPECT_DOUBLE_EQ(last.at("train/tokens_per_sec"), 1000 / last.at("train/step_time_sec"));
  EXPECT_GT(last.at("memory/peak_rss_gb"), 0.0);
}

// The machine's memory as /proc/meminfo's MemTotal states it, in GiB.
double mem_total_gib() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib / (1024.0 * 1024.0);
  }
  ADD_FAILURE() << "no MemTotal in /proc/meminfo";
  return 0;
}

// A CPU run's tensors live in host memory: KempnerForge's gpu/* memory names carry the process's resident memory (as
// its dashboards read them); gpu/reserved_gb, a CUDA allocator's cache, has no such meaning and is absent. A run on a
// device logs none of them.
TEST(Tracker, AHostMemoryRunAlsoLogsKempnerForgesMemoryNames) {
  Recorded out;
  MetricsTracker t = tracker(out, 1e6, 1e9, 1, /*host_memory=*/true);
  train_step(t, 1, 2.0);
  const auto& line = out.lines.at(0);
  EXPECT_DOUBLE_EQ(line.at("gpu/peak_gb"), line.at("memory/peak_rss_gb"));
  EXPECT_GT(line.at("gpu/allocated_gb"), 0.0);
  EXPECT_LE(line.at("gpu/allocated_gb"), line.at("gpu/peak_gb"));
  // MemTotal is in KiB, a whole number of pages: the two readings of the machine's memory agree to a page.
  EXPECT_NEAR(line.at("gpu/mem_utilization"), line.at("gpu/peak_gb") / mem_total_gib(),
              line.at("gpu/mem_utilization") * 4096.0 / (mem_total_gib() * 1024 * 1024 * 1024));
  EXPECT_EQ(line.count("gpu/reserved_gb"), 0u);

  Recorded device;
  MetricsTracker on_device = tracker(device, 1e6, 1e9, 1, /*host_memory=*/false);
  train_step(on_device, 1, 2.0);
  for (const char* name : {"gpu/allocated_gb", "gpu/peak_gb", "gpu/mem_utilization"}) {
    EXPECT_EQ(device.lines.at(0).count(name), 0u) << name;
  }
  EXPECT_GT(device.lines.at(0).at("memory/peak_rss_gb"), 0.0);
}

TEST(Tracker, LogAndFlushReachEveryBackend) {
  Recorded first, second;
  std::vector<std::unique_ptr<sdk::MetricBackend>> backends;
  backends.push_back(std::make_unique<RecordingBackend>(first));
  backends.push_back(std::make_unique<RecordingBackend>(second));
  MetricsTracker t(std::move(backends), /*log_interval=*/10, 1e6, 1e9, /*host_memory=*/false);
  t.log(50, {{"eval/loss", 3.5}});
  t.flush();
  for (const Recorded* out : {&first, &second}) {
    EXPECT_EQ(out->steps, std::vector<int64_t>{50});
    ASSERT_EQ(out->lines.size(), 1u);
    EXPECT_DOUBLE_EQ(out->lines[0].at("eval/loss"), 3.5);
    EXPECT_EQ(out->flushes, 1);
  }
}

TEST(Tracker, MfuIsTheFractionOfThePeakThatTheTokenRateReaches) {
  Recorded out;
  MetricsTracker t = tracker(out, /*flops_per_token=*/1e6, /*peak_tflops=*/1e9);  // MFU well below 1
  t.start_step();
  t.end_step({1, 2.0, 1.0, 1e-3, /*tokens=*/1000});
  ASSERT_EQ(out.lines.size(), 1u);
  const auto& m = out.lines[0];
  EXPECT_DOUBLE_EQ(m.at("train/mfu"), 1e6 * m.at("train/tokens_per_sec") / (1e9 * 1e12));
  EXPECT_DOUBLE_EQ(m.at("smoothed/mfu"), m.at("train/mfu"));  // the first step seeds the EMA
}

TEST(Tracker, MfuAboveOneIsLoggedUnclampedAndWarnedAboutOnce) {
  Recorded out;
  MetricsTracker t = tracker(out, /*flops_per_token=*/1e6, /*peak_tflops=*/1e-15);  // an absurdly low peak
  testing::internal::CaptureStderr();
  for (int64_t step = 1; step <= 3; ++step) {
    t.start_step();
    t.end_step({step, 2.0, 1.0, 1e-3, /*tokens=*/1000});
  }
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(out.lines.size(), 3u);
  for (const auto& m : out.lines) EXPECT_GT(m.at("train/mfu"), 1.0);
  const std::string warning = "exceeds 100%: the MFU peak";
  const auto first = err.find(warning);
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find(warning, first + 1), std::string::npos) << err;
  EXPECT_NE(err.find("[metrics] peak_tflops"), std::string::npos) << err;
}

// A backend with a run id that records how the run ended, or throws from end().
class EndingBackend final : public sdk::MetricBackend {
 public:
  EndingBackend(std::string id, std::vector<sdk::RunEnd>& ends, bool throws)
      : id_(std::move(id)), ends_(ends), throws_(throws) {}
  void log(int64_t, const sdk::MetricList&) override {}
  std::string run_id() const override { return id_; }
  void end(sdk::RunEnd how) override {
    ends_.push_back(how);
    if (throws_) throw sdk::Error("the store is gone");
  }

 private:
  std::string id_;
  std::vector<sdk::RunEnd>& ends_;
  bool throws_;
};

TEST(Tracker, RunIdsInBackendOrderAndEachBackendToldOnceHowTheRunEnded) {
  std::vector<sdk::RunEnd> first_ends, second_ends;
  Recorded out;
  std::vector<std::unique_ptr<sdk::MetricBackend>> backends;
  backends.push_back(std::make_unique<EndingBackend>("run-a", first_ends, /*throws=*/true));
  backends.push_back(std::make_unique<RecordingBackend>(out));  // no run id: ""
  backends.push_back(std::make_unique<EndingBackend>("run-c", second_ends, /*throws=*/false));
  MetricsTracker t(std::move(backends), 1, 0, 0, /*host_memory=*/false);
  EXPECT_EQ(t.run_ids(), (std::vector<std::string>{"run-a", "", "run-c"}));
  testing::internal::CaptureStderr();
  t.end(sdk::RunEnd::killed);  // the first backend throws: logged, and the others are still told
  t.end(sdk::RunEnd::finished);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(first_ends, std::vector<sdk::RunEnd>{sdk::RunEnd::killed});
  EXPECT_EQ(second_ends, std::vector<sdk::RunEnd>{sdk::RunEnd::killed});
  EXPECT_NE(err.find("failed to record the end of the run: the store is gone"), std::string::npos) << err;
}

}  // namespace
}  // namespace kforge::metrics
