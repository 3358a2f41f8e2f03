// FailureLog: the first kFailuresShown failures warned one by one, the rest summed up at most once an interval (and
// at the end), and sdk::ConfigError naming the dataset and the first errors at the kMaxConsecutiveFailures-th failure
// in a row, a usable sample ending the run.
#include "image_text_io/failure_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {

using image_text::FailureLog;
using image_text::kFailureSummaryInterval;
using image_text::kFailuresShown;
using image_text::kMaxConsecutiveFailures;

struct Lines {
  std::vector<std::string> lines;
  image_text::Warn sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FailureLog, ShowsTheFirstFewThenOneSummaryPerIntervalAndTheRestAtTheEnd) {
  Lines warnings;
  const FailureLog::Clock::time_point t0{};
  {
    FailureLog log("the shards", warnings.sink());
    for (int64_t i = 0; i < 50; ++i) {
      log.failed("sample " + std::to_string(i) + " is bad; skipped", t0);
      if (i % 10 == 0) log.succeeded();  // never kMaxConsecutiveFailures in a row
    }
    ASSERT_EQ(warnings.lines.size(), static_cast<size_t>(kFailuresShown));
    for (int64_t i = 0; i < kFailuresShown; ++i) EXPECT_TRUE(mentions(warnings.lines[i], "sample " + std::to_string(i)));
    EXPECT_TRUE(mentions(warnings.lines.back(), "summed up at most every 30 s")) << warnings.lines.back();
    // One interval later the next failure sums up the 45 not shown, and itself.
    log.failed("sample 50 is bad; skipped", t0 + kFailureSummaryInterval);
    ASSERT_EQ(warnings.lines.size(), static_cast<size_t>(kFailuresShown + 1));
    EXPECT_EQ(warnings.lines.back(), "46 more unusable samples in the shards not shown (51 in all so far)");
    log.failed("sample 51 is bad; skipped", t0 + kFailureSummaryInterval);
    log.failed("sample 52 is bad; skipped", t0 + kFailureSummaryInterval);
    EXPECT_EQ(warnings.lines.size(), static_cast<size_t>(kFailuresShown + 1));
  }
  ASSERT_EQ(warnings.lines.size(), static_cast<size_t>(kFailuresShown + 2));
  EXPECT_EQ(warnings.lines.back(), "2 more unusable samples in the shards not shown (53 in all so far)");
}

TEST(FailureLog, TooManyFailuresInARowAreAConfigErrorNamingTheDatasetAndTheFirstErrors) {
  Lines warnings;
  FailureLog log("[data] dataset_path = \"/data/x\"", warnings.sink());
  for (int64_t i = 1; i < kMaxConsecutiveFailures; ++i) log.failed("bad " + std::to_string(i));
  log.succeeded();
  for (int64_t i = 1; i < kMaxConsecutiveFailures; ++i) log.failed("worse " + std::to_string(i));
  std::string message;
  try {
    log.failed("the last straw");
  } catch (const sdk::ConfigError& e) {
    message = e.what();
  }
  EXPECT_TRUE(mentions(message, "[data] dataset_path = \"/data/x\": 100 samples in a row could not be used (199 in all)"))
      << message;
  EXPECT_TRUE(message.size() > 5 && message.substr(message.size() - 5) == "bad 5") << message;
  EXPECT_TRUE(mentions(message, "The first errors:\n  bad 1\n  bad 2\n  bad 3\n  bad 4\n  bad 5")) << message;
  EXPECT_EQ(warnings.lines.size(), static_cast<size_t>(kFailuresShown)) << "nothing summed up within the interval";
}

}  // namespace
}  // namespace kforge::test
