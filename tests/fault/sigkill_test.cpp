// SIGKILL at seeded points of a 1-rank run and a 2-rank FSDP run, each kill followed by a resume
// that may itself be killed: inside a rank's shard write, before its fsync, before the directory
// rename, before `latest` moves, before pruning, at step ends, and at wall-clock moments (after the
// run has printed its k-th step line). Every resume must load the newest complete checkpoint and
// continue from the step after it, and the chain's losses must equal an uninterrupted run's bit for
// bit. Prints "[ fault    ] sigkill world=W points=P resumed=R lost_steps=L ...".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <random>

#include "fault_job.h"

namespace kforge::test {
namespace {

constexpr int kKillPoints = 20;  // kills per chain, wall-clock ones included
constexpr int kWallClockKills = 4;
constexpr int64_t kKillSteps = 48;  // more than 20 kills can use up (each run advances at most ~3 steps)

struct KillPlan {
  std::string point;  ///< a fault point; empty: a wall-clock kill
  int pass = 1;       ///< the point's pass, or the step lines this run prints before the kill
  int rank = 0;
  std::string describe() const {
    return point.empty() ? fmt::format("rank {} at its run's step line {}", rank, pass)
                         : fmt::format("rank {} at {}@{}", rank, point, pass);
  }
};

// Every fault point once, the wall-clock kills, then seeded points, in a seeded order. The points
// only the leader passes (the directory rename and after) kill rank 0.
std::vector<KillPlan> kill_plans(int world, uint64_t seed) {
  const std::vector<std::pair<std::string, bool>> points = {
      {"checkpoint.shard_partial", true}, {"checkpoint.shard_written", true}, {"checkpoint.fsynced", false},
      {"checkpoint.renamed", false},      {"checkpoint.latest_moved", false}, {"train.step_end", true}};
  std::mt19937_64 rng(seed);
  auto below = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  std::vector<KillPlan> plans;
  auto add = [&](const std::pair<std::string, bool>& point) {
    plans.push_back({point.first, 1 + below(3), point.second ? below(world) : 0});
  };
  for (const auto& point : points) add(point);
  for (int k = 0; k < kWallClockKills; ++k) plans.push_back({"", 1 + below(3), below(world)});
  while (static_cast<int>(plans.size()) < kKillPoints) add(points[static_cast<size_t>(below(6))]);
  std::shuffle(plans.begin(), plans.end(), rng);
  return plans;
}

JobEnd run_until_killed(const FaultJob& job, const KillPlan& plan) {
  if (!plan.point.empty()) {
    return job.run({{"KFORGE_FAULT", plan.point + "@" + std::to_string(plan.pass) + ":KILL"},
                    {"KFORGE_FAULT_RANK", std::to_string(plan.rank)}});
  }
  int lines = 0;
  JobWatch watch;
  watch.on_line = [&](const std::string& line, const RunningJob& running) {
    if (line.find(" [step ") != std::string::npos && ++lines == plan.pass) ::kill(running.rank_pid(plan.rank), SIGKILL);
  };
  return job.run({}, watch);
}

struct ChainCounts {
  int points = 0, resumed = 0;
  int64_t lost_steps = 0;
};

// A run that started after a kill: it resumed from the newest complete checkpoint (`complete`,
// 0 for none) and its first step is the one after it.
void check_resume(const JobEnd& end, int64_t complete, const std::string& history, ChainCounts& counts) {
  const auto from = resumed_step(end.output);
  ASSERT_TRUE(from.has_value()) << "the run does not say where it started\n" << history << end.output;
  EXPECT_EQ(*from, complete) << "resumed from another step than the newest complete checkpoint\n"
                             << history << end.output;
  EXPECT_EQ(end.output.find("skipping checkpoint"), std::string::npos)
      << "a kill left a damaged checkpoint where resume looks\n"
      << history << end.output;
  if (const auto first = first_logged_step(end.output)) {
    EXPECT_EQ(*first, *from + 1) << "the step count does not continue\n" << history << end.output;
  }
  if (*from == complete) ++counts.resumed;
  counts.lost_steps += std::max<int64_t>(0, complete - *from);
}

void kill_and_resume(int world, uint64_t seed) {
  FaultJob straight("kill_straight", world, kKillSteps);
  const JobEnd reference = straight.run();
  ASSERT_EQ(reference.code(), 0) << reference.output;
  std::string problem;
  const auto expected = losses_by_step(straight.metrics, &problem);
  ASSERT_EQ(problem, "");
  ASSERT_EQ(static_cast<int64_t>(expected.size()), kKillSteps);

  FaultJob job("kill", world, kKillSteps);
  ChainCounts counts;
  int64_t complete = 0;
  std::string history;
  for (const KillPlan& plan : kill_plans(world, seed)) {
    const JobEnd end = run_until_killed(job, plan);
    ASSERT_FALSE(end.timed_out) << history << end.output;
    if (counts.points > 0) check_resume(end, complete, history, counts);
    ASSERT_NE(end.code(), 0) << "the run ended before " << plan.describe() << " (too few steps for the chain?)\n"
                             << history << end.output;
    ASSERT_EQ(end.code(), 128 + SIGKILL) << plan.describe() << "\n" << history << end.output;
    if (world > 1) {
      EXPECT_NE(end.output.find(fmt::format("rank {} exited with code 137", plan.rank)), std::string::npos)
          << plan.describe() << "\n"
          << end.output;
      // The surviving ranks fail cleanly: no abort, no crash, no heap corruption (once seen as
      // "free(): invalid pointer"), no sanitizer report when the suite runs under ASan.
      for (const char* crash :
           {"exited with code 134", "exited with code 139", "free(): ", "AddressSanitizer", "runtime error:"}) {
        EXPECT_EQ(end.output.find(crash), std::string::npos) << crash << " after " << plan.describe() << "\n"
                                                             << end.output;
      }
    }
    ++counts.points;
    complete = newest_complete_step(job.checkpoints).value_or(0);
    history += fmt::format("killed {}: newest complete checkpoint step {}\n", plan.describe(), complete);
  }
  const JobEnd last = job.run();
  ASSERT_EQ(last.code(), 0) << history << last.output;
  check_resume(last, complete, history, counts);

  const auto chained = losses_by_step(job.metrics, &problem);
  EXPECT_EQ(problem, "") << history;
  for (int64_t step = 1; step <= kKillSteps; ++step) {
    ASSERT_TRUE(chained.count(step)) << "step " << step << " has no loss\n" << history;
    EXPECT_EQ(chained.at(step), expected.at(step)) << "step " << step << "\n" << history;
  }
  report_fault(fmt::format("sigkill world={} points={} resumed={} lost_steps={} wallclock={} seed={}", world,
                           counts.points, counts.resumed, counts.lost_steps, kWallClockKills, seed));
  EXPECT_EQ(counts.points, kKillPoints);
  EXPECT_EQ(counts.resumed, counts.points);
  EXPECT_EQ(counts.lost_steps, 0);
}

TEST(FaultSigkill, OneRankRunResumesBitExactlyAfterTwentySeededKills) { kill_and_resume(1, 20261); }

TEST(FaultSigkill, TwoRankFsdpRunResumesBitExactlyAfterTwentySeededKills) { kill_and_resume(2, 20262); }

}  // namespace
}  // namespace kforge::test
