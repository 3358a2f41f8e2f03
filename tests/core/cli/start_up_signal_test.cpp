// A shutdown signal while `kforge run` starts (plugins, config, checkpoint load) is a request to
// stop, not death by the default action: the run exits 75 and says nothing was trained. So is one at the
// front-end's first statement, and one sent the moment kforge is spawned by a parent that holds the signals
// blocked across exec (as kforge launch and the front-end do for what they start), for `kforge run` and
// `kforge launch` alike.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/train/train_fixture.h"
#include "support/expect_text.h"
#include "support/read_file.h"

namespace kforge::test {
namespace {

// Writes `text` to `fd` whole.
bool write_text(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

TEST(StartUpSignal, SigtermWhileTheConfigIsReadExits75SayingNothingWasTrained) {
  TrainFixture fx;
  // The config is a FIFO: kforge blocks reading it, well inside its start-up, until the test writes it.
  const std::filesystem::path config = fx.root / "job.toml", log = fx.root / "run.log";
  ASSERT_EQ(::mkfifo(config.c_str(), 0600), 0);
  const pid_t run = ::fork();
  if (run == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execl(KFORGE_BIN, KFORGE_BIN, "run", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Opening the FIFO for writing succeeds once kforge has it open for reading (a bounded wait).
  int fifo = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((fifo = ::open(config.c_str(), O_WRONLY | O_NONBLOCK)) < 0 && errno == ENXIO &&
         std::chrono::steady_clock::now() < deadline && ::waitpid(run, nullptr, WNOHANG) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling the condition, not synchronising
  }
  ASSERT_GE(fifo, 0) << "kforge never opened its config:\n" << read_file(log);
  ASSERT_EQ(::kill(run, SIGTERM), 0);
  ASSERT_TRUE(write_text(fifo, fx.toml));
  ::close(fifo);
  int status = 0;
  ASSERT_EQ(::waitpid(run, &status, 0), run);
  const std::string output = read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << ":\n" << output;
  EXPECT_EQ(WEXITSTATUS(status), 75) << output;
  expect_has(output, {"shutdown requested (signal 15) before training started: nothing to save"});
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "step_1")) << output;
}

// `kforge <args>` started by posix_spawn (which returns once the child has exec'd), its output to `log`, with
// `extra_env` added and the shutdown signals blocked across the exec when `hold_signals`.
pid_t spawn_kforge(const std::vector<std::string>& args, const std::filesystem::path& log,
                   const std::vector<std::string>& extra_env, bool hold_signals) {
  std::vector<std::string> argv_strings = {KFORGE_BIN};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = extra_env;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t mask;
  sigemptyset(&mask);
  if (hold_signals) {
    for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaddset(&mask, sig);
  }
  posix_spawnattr_setsigmask(&attributes, &mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, KFORGE_BIN, &files, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&files);
  return error == 0 ? pid : -1;
}

// How `pid` ended: its exit code, or 128 + the signal that ended it (as a shell reports it).
int exit_code_of(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// `kforge run` and a 2-rank `kforge launch` of the fixture's job.
std::vector<std::vector<std::string>> start_up_commands(const TrainFixture& fx) {
  const std::filesystem::path config = fx.root / "job.toml";
  std::ofstream(config) << fx.toml;
  return {{"run", config.string()},
          {"launch", "--nproc-per-node", "2", "--log-dir", (fx.root / "logs").string(), "--grace-sec", "5", "--",
           "run", config.string()}};
}

TEST(StartUpSignal, SigtermAtTheFrontEndsFirstStatementExits75ForRunAndLaunch) {
  TrainFixture fx;
  for (const auto& args : start_up_commands(fx)) {
    const std::filesystem::path log = fx.root / (args[0] + ".log");
    // The front-end stops itself at its first statement (fault point frontend.start); the signal arrives there.
    const pid_t pid = spawn_kforge(args, log, {"KFORGE_FAULT=frontend.start:STOP"}, /*hold_signals=*/false);
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WUNTRACED), pid);
    ASSERT_TRUE(WIFSTOPPED(status)) << args[0] << " ended before its first statement:\n" << read_file(log);
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    ASSERT_EQ(::kill(pid, SIGCONT), 0);
    const int code = exit_code_of(pid);
    const std::string output = read_file(log);
    EXPECT_EQ(code, 75) << args[0] << ":\n" << output;
    expect_has(output, {"shutdown requested (signal 15) before training started: nothing to save"});
  }
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "step_1"));
}

TEST(StartUpSignal, SigtermTheMomentKforgeIsSpawnedWithTheSignalsHeldExits75EveryTime) {
  // No process handles a signal before its first instruction: a parent that wants one sent that early to be a stop
  // request holds the signals blocked across exec, and kforge keeps them blocked until it has its handlers.
  TrainFixture fx;
  const std::vector<std::vector<std::string>> commands = start_up_commands(fx);
  for (int attempt = 0; attempt < 20; ++attempt) {
    const std::vector<std::string>& args = commands[attempt % 10 == 9 ? 1 : 0];  // launch twice in the 20
    const std::filesystem::path log = fx.root / fmt::format("attempt_{}.log", attempt);
    const pid_t pid = spawn_kforge(args, log, {}, /*hold_signals=*/true);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const int code = exit_code_of(pid);
    ASSERT_EQ(code, 75) << "attempt " << attempt << ", " << args[0] << ":\n" << read_file(log);
  }
}

}  // namespace
}  // namespace kforge::test
