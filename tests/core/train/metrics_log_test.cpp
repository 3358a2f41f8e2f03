// metrics.jsonl over a crash and a resume holds every step exactly once, and the MFU a run logs
// against the derived CPU peak is a fraction in (0, 1].
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

// Crashes the run (no final checkpoint) at a step, as a killed process would stop.
class CrashingHook final : public sdk::Hook {
 public:
  explicit CrashingHook(int64_t at) : at_(at) {}
  void on_step_end(const sdk::StepEvent& event) override {
    if (event.step == at_) throw std::runtime_error("simulated crash");
  }

 private:
  int64_t at_;
};

// step -> the train lines (those with train/loss) of metrics.jsonl, each parsed.
std::map<int64_t, std::vector<nlohmann::json>> train_lines(const TrainFixture& fx) {
  std::map<int64_t, std::vector<nlohmann::json>> out;
  std::ifstream in(fx.checkpoint_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("train/loss")) out[j.at("step").get<int64_t>()].push_back(j);
  }
  return out;
}

TEST(MetricsLog, EveryStepIsLoggedExactlyOnceAcrossACrashAndAResume) {
  TrainFixture fx;  // checkpoints every 5 steps
  EXPECT_THROW(fx.run({"--train.max_steps=12"}, {std::make_shared<CrashingHook>(8)}), std::runtime_error);
  ASSERT_EQ(train_lines(fx).rbegin()->first, 8);  // steps 6-8 were logged after the last checkpoint

  const auto resumed = fx.run({"--train.max_steps=12"}, {});
  EXPECT_EQ(resumed.resumed_from, 5);
  const auto lines = train_lines(fx);
  ASSERT_EQ(lines.size(), 12u);
  for (const auto& [step, at_step] : lines) EXPECT_EQ(at_step.size(), 1u) << "step " << step;
  EXPECT_EQ(lines.begin()->first, 1);
  EXPECT_EQ(lines.rbegin()->first, 12);
}

TEST(MetricsLog, MfuAgainstTheDerivedPeakIsAFraction) {
  TrainFixture fx;
  fx.run({"--train.max_steps=3", "--metrics.peak_tflops=0"}, {});
  const auto lines = train_lines(fx);
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& [step, at_step] : lines) {
    const double mfu = at_step.at(0).at("train/mfu").get<double>();
    EXPECT_GT(mfu, 0.0) << "step " << step;
    EXPECT_LE(mfu, 1.0) << "step " << step;
  }
}

}  // namespace
}  // namespace kforge::test
