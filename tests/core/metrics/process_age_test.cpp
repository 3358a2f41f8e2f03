// process_age_seconds against the test's own clock: a child spawned between two clock readings is, when asked later,
// as old as the time since then, to the kernel's clock tick.
#include "metrics/process_age.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "kforge/sdk/error.h"

extern char** environ;

namespace kforge::test {
namespace {

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The child ages for its own 0.3 s; the test waits for its exit (an event, not a guess at how long it takes) without
// reaping it, so its /proc/PID/stat, start time included, is still there to be read.
TEST(ProcessAge, AChildIsAsOldAsTheTimeSinceItWasSpawnedToTheClockTick) {
  char sleep_path[] = "/bin/sleep", seconds[] = "0.3";
  char* argv[] = {sleep_path, seconds, nullptr};
  const auto before_spawn = std::chrono::steady_clock::now();
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, sleep_path, nullptr, nullptr, argv, environ), 0);
  const auto after_spawn = std::chrono::steady_clock::now();
  siginfo_t exited{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &exited, WEXITED | WNOWAIT), 0);
  const auto before_ask = std::chrono::steady_clock::now();
  const double age = metrics::process_age_seconds(child);
  const auto after_ask = std::chrono::steady_clock::now();
  waitpid(child, nullptr, 0);
  // The start time and /proc/uptime are each rounded to a tick (1/CLK_TCK s; /proc/uptime to 0.01 s).
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK)) + 0.01;
  EXPECT_GE(age, seconds_between(after_spawn, before_ask) - tick);
  EXPECT_LE(age, seconds_between(before_spawn, after_ask) + tick);
}

TEST(ProcessAge, ThisProcessHasAnAgeAndAGoneProcessIsAnError) {
  const double mine = metrics::process_age_seconds();
  EXPECT_GT(mine, 0.0);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // reaped: /proc/PID is gone
  EXPECT_THROW(metrics::process_age_seconds(child), sdk::Error);
}

// A child naming its parent in KFORGE_LAUNCHER_PID (as kforge launch's forked workers do) counts from the parent's
// start; naming another process, or none, from its own.
TEST(ProcessAge, StartUpCountsFromTheLauncherOnlyWhenTheLauncherIsTheParent) {
  const double parent_age = metrics::process_age_seconds();
  const auto child_start_up = [](const std::string& launcher) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t child = fork();
    if (child == 0) {
      if (launcher.empty()) {
        unsetenv("KFORGE_LAUNCHER_PID");
      } else {
        setenv("KFORGE_LAUNCHER_PID", (launcher == "parent" ? std::to_string(getppid()) : launcher).c_str(), 1);
      }
      const double seconds = metrics::start_up_seconds();
      _exit(write(fds[1], &seconds, sizeof seconds) == sizeof seconds ? 0 : 1);
    }
    close(fds[1]);
    double seconds = -1;
    const bool read_all = read(fds[0], &seconds, sizeof seconds) == sizeof seconds;
    close(fds[0]);
    waitpid(child, nullptr, 0);
    return read_all ? seconds : -1.0;
  };
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK)) + 0.01;
  EXPECT_GE(child_start_up("parent"), parent_age - tick);  // the parent is at least as old as it was above
  // A child just forked is younger than its parent by at least the parent's age before the fork.
  EXPECT_LT(child_start_up(""), parent_age - tick);
  EXPECT_LT(child_start_up("1"), parent_age - tick);  // init is not its parent
}

}  // namespace
}  // namespace kforge::test
