// A shutdown signal while `kforge run` starts (plugins, config, checkpoint load) is a request to
// stop, not death by the default action: the run exits 75 and says nothing was trained.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace kforge::test
