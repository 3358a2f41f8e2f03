// Log lines start with the local time to the millisecond, then the rank and the level (SLURM logs
// interleave many processes and need the time of every line).
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <regex>

#include "log/log.h"

namespace kforge::log {
namespace {

std::string local_time(std::chrono::system_clock::time_point t, const char* millis) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return std::string(buf) + millis;
}

TEST(LogFormat, LinesStartWithTheLocalTimeToTheMillisecondThenRankAndLevel) {
  testing::internal::CaptureStderr();
  init(3);  // with stderr captured: not a terminal, so no status-line erase prefix
  const auto before = std::chrono::system_clock::now();
  get().info("hello {}", 42);
  const auto after = std::chrono::system_clock::now();
  const std::string err = testing::internal::GetCapturedStderr();
  init(0);

  std::smatch m;
  ASSERT_TRUE(
      std::regex_match(err, m, std::regex(R"((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[rank 3\] info hello 42\n)")))
      << err;
  // Between the two clock readings, in local time (the seconds of `before`, from .000, to `after`'s .999).
  EXPECT_GE(m[1].str(), local_time(before, ".000")) << err;
  EXPECT_LE(m[1].str(), local_time(after, ".999")) << err;
}

}  // namespace
}  // namespace kforge::log
