// metrics.jsonl over a crash and a resume holds every step exactly once, the MFU a run logs
// against the derived CPU peak is a fraction in (0, 1], each process logs its start-up time once (and a
// multi-rank one its seconds in collectives every step), and the run log (runs.jsonl) has one start
// and one end line per process, with where it started and how it ended; with [metrics] per_rank every
// rank logs its own metrics.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/oracle.h"

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

TEST(MetricsLog, EachProcessLogsItsStartUpOnceWithItsFirstStepAndOneRankNoCollectives) {
  TrainFixture fx;  // checkpoints every 5 steps
  fx.run({"--train.max_steps=5"}, {});
  fx.run({"--train.max_steps=8"}, {});  // resumes from step 5's checkpoint: its first step is 6
  const auto startup = metric(fx, "time/startup_sec");
  ASSERT_EQ(startup.size(), 2u);
  EXPECT_TRUE(startup.count(1) && startup.count(6));
  // In-process runs: the test binary's age at each run's first step, so the resumed run's is the larger.
  EXPECT_GT(startup.at(1), 0.0);
  EXPECT_GT(startup.at(6), startup.at(1));
  EXPECT_TRUE(metric(fx, "dist/collective_seconds").empty());
}

std::vector<nlohmann::json> run_log(const TrainFixture& fx) {
  std::vector<nlohmann::json> out;
  std::ifstream in(fx.checkpoint_dir / "runs.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(RunLog, EachProcessLogsItsStartAndHowItEndedAFailureIncluded) {
  TrainFixture fx;  // checkpoints every 5 steps
  EXPECT_THROW(fx.run({"--train.max_steps=12"}, {std::make_shared<CrashingHook>(8)}), std::runtime_error);
  fx.run({"--train.max_steps=12"}, {});
  const auto log = run_log(fx);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].at("event"), "start");
  EXPECT_EQ(log[0].at("step"), 0);
  EXPECT_TRUE(log[0].at("resumed_from").is_null());
  EXPECT_EQ(log[1].at("event"), "end");
  EXPECT_EQ(log[1].at("outcome"), "failed");
  EXPECT_EQ(log[1].at("step"), 8);  // the hook threw at the end of step 8
  EXPECT_EQ(log[2].at("event"), "start");
  EXPECT_EQ(log[2].at("step"), 5);
  EXPECT_EQ(log[2].at("resumed_from"), 5);
  EXPECT_EQ(log[3].at("outcome"), "finished");
  EXPECT_EQ(log[3].at("step"), 12);
  for (const auto& start : {log[0], log[2]}) {
    EXPECT_EQ(start.at("world_size"), 1);
    EXPECT_FALSE(start.at("environment").at("cpu").get<std::string>().empty()) << start.dump();
    EXPECT_GE(start.at("environment").at("intra_op_threads").get<int>(), 1) << start.dump();
    EXPECT_TRUE(start.at("environment").at("heap_huge_pages").is_boolean()) << start.dump();
    EXPECT_FALSE(start.at("plugins").empty()) << start.dump();
  }
  EXPECT_LE(log[0].at("time").get<double>(), log[1].at("time").get<double>());
}

TEST(RunLog, APreemptedRunEndsKilledAtTheStepItSaved) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  hook->signal_at = 3;
  hook->signal = SIGTERM;
  fx.run({"--checkpoint.interval=1000"}, {hook});
  const auto log = run_log(fx);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].at("event"), "end");
  EXPECT_EQ(log[1].at("outcome"), "killed");
  EXPECT_EQ(log[1].at("step"), 3);
}

// The train lines of a metrics.jsonl, by step.
std::map<int64_t, nlohmann::json> train_lines_of(const std::filesystem::path& file) {
  std::map<int64_t, nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("train/loss")) out[j.at("step").get<int64_t>()] = j;
  }
  return out;
}

TEST(PerRankMetrics, EveryRankLogsItsOwnLinesOnlyWhenAsked) {
  TrainFixture fx;
  std::vector<std::string> overrides = replicated_over(2);
  overrides.push_back("--train.max_steps=4");
  launch(fx, 2, overrides);
  EXPECT_EQ(train_lines_of(fx.checkpoint_dir / "metrics.jsonl").size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "rank_1")) << "rank 1 wrote metrics unasked";

  TrainFixture per_rank;
  const std::filesystem::path store = per_rank.root / "mlruns";
  overrides.push_back("--metrics.per_rank=true");
  overrides.push_back("'--metrics.backends=[\"jsonl\", \"mlflow\"]'");  // one shell word
  overrides.push_back("--metrics.mlflow_dir=" + store.string());
  launch(per_rank, 2, overrides);
  const auto rank0 = train_lines_of(per_rank.checkpoint_dir / "metrics.jsonl");
  const auto rank1 = train_lines_of(per_rank.checkpoint_dir / "rank_1" / "metrics.jsonl");
  ASSERT_EQ(rank0.size(), 4u);
  ASSERT_EQ(rank1.size(), 4u);
  for (const auto& [step, line] : rank1) {
    EXPECT_EQ(line.at("train/loss"), rank0.at(step).at("train/loss")) << "step " << step;  // the agreed loss
    EXPECT_GT(line.at("memory/peak_rss_gb").get<double>(), 0.0) << "step " << step;        // its own memory
    EXPECT_GT(line.at("train/mfu").get<double>(), 0.0) << "step " << step;
  }
  // Each rank times its own start-up (process start to step 1) and every step's collectives.
  for (const auto& file :
       {per_rank.checkpoint_dir / "metrics.jsonl", per_rank.checkpoint_dir / "rank_1" / "metrics.jsonl"}) {
    const auto startup = metric(file, "time/startup_sec");
    ASSERT_EQ(startup.size(), 1u) << file;
    EXPECT_GT(startup.at(1), 0.0) << file;
    const auto waited = metric(file, "dist/collective_seconds");
    ASSERT_EQ(waited.size(), 4u) << file;
    for (const auto& [step, seconds] : waited) EXPECT_GT(seconds, 0.0) << file << " step " << step;
  }
  // The run log stays rank 0's.
  EXPECT_FALSE(std::filesystem::exists(per_rank.checkpoint_dir / "rank_1" / "runs.jsonl"));
  // Both ranks created the MLflow experiment at once, and agree on it: one experiment, a run per rank.
  std::string out;
  ASSERT_EQ(run_oracle("read_mlflow.py", {store.string()}, &out), 0) << out;
  const auto mlflow = nlohmann::json::parse(out);
  EXPECT_EQ(mlflow.at("experiments").size(), 2u) << out;  // MLflow's Default and kforge
  std::set<std::string> names, experiments;
  for (const auto& run : mlflow.at("runs")) {
    names.insert(run.at("run_name").get<std::string>());
    experiments.insert(run.at("experiment_id").get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"checkpoints", "checkpoints.rank1"})) << out;
  EXPECT_EQ(experiments.size(), 1u) << out;
}

}  // namespace
}  // namespace kforge::test
