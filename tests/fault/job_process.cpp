// A kforge command run as a child process, its output read line by line (see job_process.h).
#include "job_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace kforge::test {

pid_t RunningJob::rank_pid(int rank) const {
  if (rank_pids.empty()) return rank == 0 ? pid : -1;
  const auto it = rank_pids.find(rank);
  return it == rank_pids.end() ? -1 : it->second;
}

int JobEnd::code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

bool JobEnd::killed_by(int signal) const { return WIFSIGNALED(status) && WTERMSIG(status) == signal; }

namespace {

// The process state letter of /proc/<pid>/stat ('\0' when the process is gone).
char job_process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ? '\0' : text[paren + 2];
}

void job_process_note_rank(const std::string& line, RunningJob& job) {
  int rank = -1, pid = -1;
  const auto at = line.find("kforge launch: rank ");
  if (at != std::string::npos && std::sscanf(line.c_str() + at, "kforge launch: rank %d is pid %d", &rank, &pid) == 2) {
    job.rank_pids[rank] = pid;
  }
}

}  // namespace

bool process_stopped(pid_t pid) { return job_process_state(pid) == 'T'; }

bool process_alive(pid_t pid) {
  const char state = job_process_state(pid);
  return state != '\0' && state != 'Z' && state != 'X';
}

JobEnd run_job(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
               const JobWatch& watch, double timeout_sec) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  RunningJob job;
  job.pid = ::fork();
  if (job.pid < 0) throw std::runtime_error("fork failed");
  if (job.pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot execute %s\n", args[0]);
    ::_exit(127);
  }
  ::close(fds[1]);
  JobEnd end;
  const auto deadline =
      FaultClock::now() + std::chrono::duration_cast<FaultClock::duration>(std::chrono::duration<double>(timeout_sec));
  std::string partial;
  for (bool open = true; open;) {
    if (FaultClock::now() >= deadline) {
      end.timed_out = true;
      ::kill(-job.pid, SIGKILL);
      for (const auto& [rank, pid] : job.rank_pids) ::kill(pid, SIGKILL);
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 20);
    if (ready > 0) {
      char buffer[4096];
      const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) open = false;
      if (n > 0) end.output.append(buffer, static_cast<size_t>(n));
      partial.append(buffer, n > 0 ? static_cast<size_t>(n) : 0);
      for (size_t eol; (eol = partial.find('\n')) != std::string::npos; partial.erase(0, eol + 1)) {
        const std::string line = partial.substr(0, eol);
        job_process_note_rank(line, job);
        if (watch.on_line) watch.on_line(line, job);
      }
    }
    if (watch.on_tick) watch.on_tick(job);
  }
  ::close(fds[0]);
  ::waitpid(job.pid, &end.status, 0);
  end.ended = FaultClock::now();
  return end;
}

}  // namespace kforge::test
