// process_age_seconds against the test's own clock: a child spawned between two clock readings is, when asked later,
// as old as the time since then, to the kernel's clock tick.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "kforge/sdk/error.h"
#include "metrics/process_age.h"

extern char** environ;

namespace kforge::test {
namespace {

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

TEST(ProcessAge, AChildIsAsOldAsTheTimeSinceItWasSpawnedToTheClockTick) {
  char sleep_path[] = "/bin/sleep", seconds[] = "30";
  char* argv[] = {sleep_path, seconds, nullptr};
  const auto before_spawn = std::chrono::steady_clock::now();
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, sleep_path, nullptr, nullptr, argv, environ), 0);
  const auto after_spawn = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // lets the child age; nothing waits on it
  const auto before_ask = std::chrono::steady_clock::now();
  const double age = metrics::process_age_seconds(child);
  const auto after_ask = std::chrono::steady_clock::now();
  kill(child, SIGKILL);
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

}  // namespace
}  // namespace kforge::test
