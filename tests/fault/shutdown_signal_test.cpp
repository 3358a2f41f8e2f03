// SIGTERM and SIGUSR1 mid-step (sent once the run has printed a step line) and mid-save (while a
// rank is held, stopped, inside its shard write by KFORGE_FAULT=checkpoint.shard_partial@2:STOP):
// the job exits 75 with a complete checkpoint of the step it stopped at, `latest` on it. For 2
// ranks the signal goes to the launcher, which forwards it. Prints "[ fault    ] shutdown ..." with
// the time from the signal to the job's exit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <regex>

#include "fault_job.h"

namespace kforge::test {
namespace {

// The last " [step N] " line of a run's output.
int64_t shutdown_last_logged_step(const std::string& output) {
  static const std::regex logged(" \\[step ([0-9]+)\\] ");
  int64_t last = -1;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), logged); it != std::sregex_iterator(); ++it) {
    last = std::stoll((*it)[1].str());
  }
  return last;
}

// Runs the job, signals it (the launcher for 2 ranks) mid-step or mid-save, and checks the exit.
void shutdown_case(int world, int signal, bool mid_save) {
  const std::string name = signal == SIGTERM ? "TERM" : "USR1";
  const std::string during = mid_save ? "save" : "step";
  FaultJob job("shutdown", world, 40);
  const int held_rank = world - 1;  // the rank held inside its shard write: the last one
  FaultClock::time_point signalled{};
  bool sent = false;
  JobWatch watch;
  if (mid_save) {
    watch.on_tick = [&](const RunningJob& running) {
      const pid_t held = running.rank_pid(held_rank);
      if (sent || held <= 0 || !process_stopped(held)) return;
      signalled = FaultClock::now();
      ::kill(running.pid, signal);
      ::kill(held, SIGCONT);
      sent = true;
    };
  } else {
    watch.on_line = [&](const std::string& line, const RunningJob& running) {
      if (sent || line.find(" [step 2] ") == std::string::npos) return;
      signalled = FaultClock::now();
      ::kill(running.pid, signal);
      sent = true;
    };
  }
  FaultEnv env;
  if (mid_save)
    env = {{"KFORGE_FAULT", "checkpoint.shard_partial@2:STOP"}, {"KFORGE_FAULT_RANK", std::to_string(held_rank)}};
  const JobEnd end = job.run(env, watch);
  ASSERT_TRUE(sent) << "never signalled (no step 2 line, or the rank never stopped in its shard write)\n" << end.output;
  ASSERT_FALSE(end.timed_out) << end.output;
  EXPECT_EQ(end.code(), 75) << end.output;
  const int64_t last = shutdown_last_logged_step(end.output);
  const auto complete = newest_complete_step(job.checkpoints);
  ASSERT_TRUE(complete.has_value()) << "no complete checkpoint\n" << end.output;
  EXPECT_EQ(*complete, last) << "the newest complete checkpoint is not the step the job stopped at\n" << end.output;
  if (mid_save) EXPECT_EQ(last, 2) << "the save in progress at the signal is not the last step\n" << end.output;
  std::error_code ec;
  EXPECT_EQ(std::filesystem::read_symlink(job.checkpoints / "latest", ec), fmt::format("step_{}", *complete))
      << end.output;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end.ended - signalled).count();
  report_fault(fmt::format("shutdown world={} signal={} during={} exit={} checkpoint=step_{} signal_to_exit_ms={}",
                           world, name, during, end.code(), *complete, ms));
}

TEST(FaultShutdown, OneRankExits75WithACompleteCheckpointOnSigtermOrSigusr1MidStepAndMidSave) {
  for (const int signal : {SIGTERM, SIGUSR1}) {
    for (const bool mid_save : {false, true}) shutdown_case(1, signal, mid_save);
  }
}

TEST(FaultShutdown, TwoRankFsdpJobExits75WithACompleteCheckpointOnSigtermOrSigusr1MidStepAndMidSave) {
  for (const int signal : {SIGTERM, SIGUSR1}) {
    for (const bool mid_save : {false, true}) shutdown_case(2, signal, mid_save);
  }
}

}  // namespace
}  // namespace kforge::test
