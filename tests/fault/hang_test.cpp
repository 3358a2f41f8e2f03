// A hung rank: rank 1 of a 2-rank FSDP job stops itself (SIGSTOP) at the end of step 3. Rank 0
// must give up within distributed.nccl_timeout_sec of that moment, naming the rank it waited for,
// and the launcher must end the job, the stopped rank included. Prints "[ fault    ] hang ...".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <regex>

#include "fault_job.h"

namespace kforge::test {
namespace {

constexpr int kHangTimeoutSec = 5;
constexpr double kHangSlackSec = 5;  // process exits, log flushing and a loaded machine

double hang_seconds(FaultClock::time_point from, FaultClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

TEST(FaultHang, AStoppedRankEndsTheJobWithinTheCollectiveTimeoutAndIsNamed) {
  FaultJob job("hang", 2, 40);
  FaultClock::time_point stopped{}, gave_up{};
  pid_t hung = -1;
  JobWatch watch;
  watch.on_tick = [&](const RunningJob& running) {
    const pid_t pid = running.rank_pid(1);
    if (hung < 0 && pid > 0 && process_stopped(pid)) {
      hung = pid;
      stopped = FaultClock::now();
    }
  };
  watch.on_line = [&](const std::string& line, const RunningJob&) {
    if (hung > 0 && gave_up == FaultClock::time_point{} && line.find("training failed") != std::string::npos) {
      gave_up = FaultClock::now();
    }
  };
  const JobEnd end = job.run({{"KFORGE_FAULT", "train.step_end@3:STOP"}, {"KFORGE_FAULT_RANK", "1"}}, watch,
                             {fmt::format("--distributed.nccl_timeout_sec={}", kHangTimeoutSec)}, 90);
  ASSERT_GT(hung, 0) << "rank 1 never stopped at train.step_end@3\n" << end.output;
  ASSERT_FALSE(end.timed_out) << "the job did not end by itself\n" << end.output;
  EXPECT_NE(end.code(), 0) << end.output;
  ASSERT_NE(gave_up, FaultClock::time_point{}) << "rank 0 did not report a failed collective\n" << end.output;
  const double to_error = hang_seconds(stopped, gave_up), to_exit = hang_seconds(stopped, end.ended);
  EXPECT_LE(to_error, kHangTimeoutSec + kHangSlackSec) << end.output;
  EXPECT_LE(to_exit, kHangTimeoutSec + 2 /* launcher grace */ + kHangSlackSec) << end.output;
  static const std::regex names_hung_rank("rank 1\\b[^\\n]*(hung|respond|timed out|timeout|stopped|waited)",
                                          std::regex::icase);
  EXPECT_TRUE(std::regex_search(end.output, names_hung_rank)) << "no line names rank 1 as the rank that hung\n"
                                                              << end.output;
  EXPECT_FALSE(process_alive(hung)) << "the stopped rank (pid " << hung << ") outlived the launcher";
  if (process_alive(hung)) ::kill(hung, SIGKILL);
  report_fault(fmt::format("hang world=2 nccl_timeout_sec={} stop_to_error_ms={:.0f} stop_to_exit_ms={:.0f} exit={}",
                           kHangTimeoutSec, to_error * 1000, to_exit * 1000, end.code()));
}

}  // namespace
}  // namespace kforge::test
