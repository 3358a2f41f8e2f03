// StatusLine: silent when stderr is not a terminal; on a terminal (a pseudo-terminal here) one line
// redrawn in place: progress bar, step of max_steps, loss, time per step and ETA, erased by clear().
#include "metrics/status_line.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>  // posix_openpt, grantpt, unlockpt, ptsname
#include <string>

namespace kforge::metrics {
namespace {

// Points stderr at a new pseudo-terminal for the test's lifetime; output() reads what reached it.
class StderrOnTerminal {
 public:
  StderrOnTerminal() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    const int terminal = ::open(::ptsname(master_), O_RDWR | O_NOCTTY);
    if (terminal < 0) return;
    saved_stderr_ = ::dup(STDERR_FILENO);
    ::dup2(terminal, STDERR_FILENO);
    ::close(terminal);
  }
  ~StderrOnTerminal() {
    restore();
    if (master_ >= 0) ::close(master_);
  }
  bool ready() const { return saved_stderr_ >= 0; }
  /// Everything written to the terminal (until nothing more arrives for 200 ms); then puts stderr back.
  std::string output() {
    std::string out;
    char buffer[4096];
    pollfd ready{master_, POLLIN, 0};
    while (::poll(&ready, 1, /*timeout_ms=*/200) > 0) {
      const ssize_t n = ::read(master_, buffer, sizeof buffer);
      if (n <= 0) break;
      out.append(buffer, static_cast<size_t>(n));
    }
    restore();
    return out;
  }

 private:
  void restore() {
    if (saved_stderr_ < 0) return;
    ::dup2(saved_stderr_, STDERR_FILENO);
    ::close(saved_stderr_);
    saved_stderr_ = -1;
  }
  int master_ = -1;
  int saved_stderr_ = -1;
};

TEST(StatusLine, PrintsNothingWhenStderrIsNotATerminal) {
  testing::internal::CaptureStderr();  // stderr becomes a file
  {
    StatusLine line(/*first_step=*/0, /*max_steps=*/10);
    line.update(5, 1.5);
    line.clear();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(StatusLine, RedrawsOneLineWithBarStepLossAndEtaOnATerminal) {
  StderrOnTerminal terminal;
  ASSERT_TRUE(terminal.ready()) << "no pseudo-terminal available";
  {
    StatusLine line(/*first_step=*/0, /*max_steps=*/10);
    line.update(5, 1.5);
  }  // the destructor erases the line
  const std::string out = terminal.output();
  const std::string bar = "[" + std::string(15, '#') + std::string(15, '.') + "]";
  const std::string drawn = "\r\033[K" + bar + " step 5/10 | loss 1.5000 | ";
  ASSERT_EQ(out.rfind(drawn, 0), 0u) << out;
  EXPECT_NE(out.find(" s/step | ETA ", drawn.size()), std::string::npos) << out;
  EXPECT_EQ(out.find('\n'), std::string::npos) << "the line is redrawn in place, never ended: " << out;
  const std::string erase = "\r\033[K";
  EXPECT_EQ(out.substr(out.size() - erase.size()), erase) << out;
}

TEST(StatusLine, ClearErasesTheLineOnATerminal) {
  StderrOnTerminal terminal;
  ASSERT_TRUE(terminal.ready()) << "no pseudo-terminal available";
  {
    StatusLine line(/*first_step=*/3, /*max_steps=*/4);
    line.clear();
  }
  EXPECT_EQ(terminal.output(), "\r\033[K\r\033[K");  // clear(), then the destructor's
}

}  // namespace
}  // namespace kforge::metrics
