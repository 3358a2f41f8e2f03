// `kforge launch` when things go wrong: every rank's exit status is reported, workers die with a
// SIGKILLed launcher, and no worker holds another worker's output pipe; the workers are forks of the launcher.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/read_file.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

// A shell command running as a child whose merged output the test reads as it comes.
class LiveCommand {
 public:
  explicit LiveCommand(const std::string& command) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~LiveCommand() {
    if (fd_ >= 0) ::close(fd_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Reads until the output contains `text`; false at EOF or after `timeout_sec` (a failure bound).
  bool wait_for(const std::string& text, int timeout_sec) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_sec);
    while (output.find(text) == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buffer[4096];
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) return false;
      output.append(buffer, static_cast<size_t>(n));
    }
    return true;
  }

  pid_t pid() const { return pid_; }
  // SIGKILL and reap.
  void kill() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string output;

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

// The pid the launcher printed for `rank` ("kforge launch: rank R is pid P"), or -1.
pid_t worker_pid(const std::string& output, int rank) {
  std::smatch m;
  const std::regex line(fmt::format("kforge launch: rank {} is pid ([0-9]+)", rank));
  return std::regex_search(output, m, line) ? static_cast<pid_t>(std::stoi(m[1])) : -1;
}

// What /proc/<pid>/fd/<fd> refers to ("pipe:[1234]"), or "".
std::string fd_target(pid_t pid, const std::string& fd) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(fmt::format("/proc/{}/fd/{}", pid, fd), ec);
  return ec ? "" : target.string();
}

// The PPid line of /proc/<pid>/status, or -1.
pid_t parent_of(pid_t pid) {
  const std::string status = read_file(fmt::format("/proc/{}/status", pid));
  const size_t at = status.find("\nPPid:");
  return at == std::string::npos ? -1 : static_cast<pid_t>(std::stoi(status.substr(at + 6)));
}

// /proc/<pid>/cmdline without the NUL bytes that pad an argument area written over.
std::string command_line(pid_t pid) {
  std::string text = read_file(fmt::format("/proc/{}/cmdline", pid));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// True when `pid` (not necessarily a child) has exited within `timeout_sec`.
bool exits_within(pid_t pid, int timeout_sec) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // already gone
  pollfd p{fd, POLLIN, 0};
  const bool exited = ::poll(&p, 1, timeout_sec * 1000) == 1;
  ::close(fd);
  return exited;
}

TEST(LaunchDurability, EveryRanksExitStatusIsReported) {
  TrainFixture fx;
  std::string output;
  launch_and_kill_after_checkpoint(fx, 2, {"--train.max_steps=2000", "--checkpoint.interval=5"}, 1, output);
  ASSERT_NE(output.find("kforge launch: exit status of every rank:"), std::string::npos) << output;
  EXPECT_TRUE(std::regex_search(output, std::regex("\n  rank 0 \\(pid [0-9]+\\): (exited with code [0-9]+|killed by "
                                                   "SIG[A-Z0-9]+ \\(code [0-9]+\\))\n")))
      << output;
  EXPECT_TRUE(std::regex_search(output, std::regex("\n  rank 1 \\(pid [0-9]+\\): killed by SIGKILL \\(code 137\\)\n")))
      << output;
}

TEST(LaunchDurability, ItsWorkersAreForksOfItThatDieWithItAndHoldNoOtherWorkersPipe) {
  TrainFixture fx;
  // Long enough that a worker left running is still training when the bound below expires.
  LiveCommand launcher(launch_command(fx, 2, {"--train.max_steps=1000000", "--checkpoint.interval=1000000"}));
  // Rank 0 logs this once both ranks have met, so both run their command.
  ASSERT_TRUE(launcher.wait_for("training from step 0", 120)) << launcher.output;
  const pid_t rank0 = worker_pid(launcher.output, 0), rank1 = worker_pid(launcher.output, 1);
  ASSERT_GT(rank0, 0) << launcher.output;
  ASSERT_GT(rank1, 0) << launcher.output;

  const std::string rank0_pipe = fd_target(rank0, "1");
  ASSERT_EQ(rank0_pipe.rfind("pipe:", 0), 0u) << rank0_pipe;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fmt::format("/proc/{}/fd", rank1), ec)) {
    EXPECT_NE(fd_target(rank1, entry.path().filename().string()), rank0_pipe)
        << "rank 1 holds rank 0's output pipe as fd " << entry.path().filename().string();
  }

  // The launcher is kforge-host (the front-end, which sh exec'd, execs it) and loads LibTorch once; its workers are its
  // forks: its children, with its initial environment block (an exec would have made one holding RANK), yet each
  // one's command line, as ps shows it, is its own.
  const std::string host = fs::canonical(fs::path(KFORGE_BIN).parent_path() / "kforge-host").string();
  EXPECT_EQ(fs::read_symlink(fmt::format("/proc/{}/exe", launcher.pid())).string(), host);
  const std::string config = (fx.root / "job.toml").string();
  const std::string worker_command = std::string(KFORGE_BIN) + '\0' + "run" + '\0' + config + '\0' +
                                     "--train.max_steps=1000000" + '\0' + "--checkpoint.interval=1000000";
  for (const pid_t rank : {rank0, rank1}) {
    EXPECT_EQ(fs::read_symlink(fmt::format("/proc/{}/exe", rank)).string(), host) << "pid " << rank;
    EXPECT_EQ(parent_of(rank), launcher.pid()) << "pid " << rank;
    EXPECT_EQ(read_file(fmt::format("/proc/{}/environ", rank)),
              read_file(fmt::format("/proc/{}/environ", launcher.pid())))
        << "pid " << rank << " was exec'd";
    EXPECT_EQ(command_line(rank), worker_command) << "pid " << rank;
  }

  launcher.kill();
  const bool rank0_gone = exits_within(rank0, 30), rank1_gone = exits_within(rank1, 30);
  EXPECT_TRUE(rank0_gone) << "rank 0 still running 30 s after the launcher was killed";
  EXPECT_TRUE(rank1_gone) << "rank 1 still running 30 s after the launcher was killed";
  if (!rank0_gone) ::kill(rank0, SIGKILL);  // leftovers of a failed run
  if (!rank1_gone) ::kill(rank1, SIGKILL);
}

}  // namespace
}  // namespace kforge::test
