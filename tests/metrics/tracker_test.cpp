// MetricsTracker: MFU is logged as a fraction of the peak (never clamped), and a value above 1 is
// warned about once.
#include "metrics/tracker.h"

#include <gtest/gtest.h>

#include <map>

#include "log/log.h"

namespace kforge::metrics {
namespace {

struct Recorded {
  std::vector<std::map<std::string, double>> lines;
};

class RecordingBackend final : public sdk::MetricBackend {
 public:
  explicit RecordingBackend(Recorded& out) : out_(out) {}
  void log(int64_t, const sdk::MetricList& metrics) override {
    out_.lines.emplace_back(metrics.begin(), metrics.end());
  }

 private:
  Recorded& out_;
};

MetricsTracker tracker(Recorded& out, double flops_per_token, double peak_tflops) {
  std::vector<std::unique_ptr<sdk::MetricBackend>> backends;
  backends.push_back(std::make_unique<RecordingBackend>(out));
  return MetricsTracker(std::move(backends), /*log_interval=*/1, flops_per_token, peak_tflops);
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

}  // namespace
}  // namespace kforge::metrics
