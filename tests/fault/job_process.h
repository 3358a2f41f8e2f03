// A kforge command run as a child process of the fault suite: extra environment variables, its
// stdout and stderr read line by line while it runs (so a test acts on what it prints), the pids of
// `kforge launch`'s ranks, and how and when it ended.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kforge::test {

using FaultClock = std::chrono::steady_clock;

/// What the harness sees of a running job: the child's pid and, for `kforge launch`, each rank's
/// pid as the launcher announces it ("kforge launch: rank R is pid P").
struct RunningJob {
  pid_t pid = -1;
  std::map<int, pid_t> rank_pids;
  /// The pid of `rank` (the child itself for a single-process run); -1 while unknown.
  pid_t rank_pid(int rank) const;
};

/// How a job ended.
struct JobEnd {
  int status = 0;      ///< waitpid status
  std::string output;  ///< stdout and stderr, interleaved as written
  FaultClock::time_point ended;
  bool timed_out = false;  ///< the harness killed it after the time limit
  /// The exit code, or 128 + the signal that ended it (as a shell reports it).
  int code() const;
  bool killed_by(int signal) const;
};

/// Callbacks while the job runs: each complete output line, and a tick about every 20 ms.
struct JobWatch {
  std::function<void(const std::string& line, const RunningJob& job)> on_line;
  std::function<void(const RunningJob& job)> on_tick;
};

/// Runs argv (argv[0] a path) with `env` added to this process's environment, until it exits and its
/// output closes. After `timeout_sec` the child and every rank it announced get SIGKILL and the
/// result says timed_out (a failure bound only: the callbacks synchronise on output and states).
JobEnd run_job(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
               const JobWatch& watch = {}, double timeout_sec = 120);

/// True once `pid` is stopped (state T in /proc/<pid>/stat).
bool process_stopped(pid_t pid);

/// True while `pid` exists and is not a zombie.
bool process_alive(pid_t pid);

}  // namespace kforge::test
