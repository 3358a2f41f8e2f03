// Rate-limited failure warnings and the consecutive-failure stop.
#include "image_text_io/failure_log.h"

#include <fmt/format.h>

#include <utility>

#include "kforge/sdk/error.h"

namespace kforge::image_text {

FailureLog::FailureLog(std::string dataset, Warn warn) : dataset_(std::move(dataset)), warn_(std::move(warn)) {}

FailureLog::~FailureLog() {
  if (unreported_ == 0) return;
  try {
    summarise(Clock::now());
  } catch (...) {  // a destructor reports what it can
  }
}

void FailureLog::summarise(Clock::time_point now) {
  warn_(fmt::format("{} more unusable samples in {} not shown ({} in all so far)", unreported_, dataset_, total_));
  unreported_ = 0;
  last_summary_ = now;
}

void FailureLog::failed(const std::string& message, Clock::time_point now) {
  ++total_;
  ++consecutive_;
  if (total_ <= kFailuresShown) {
    first_.push_back(message);
    warn_(total_ < kFailuresShown
              ? message
              : fmt::format("{} (further unusable samples are summed up at most every {} s)", message,
                            kFailureSummaryInterval.count()));
    if (total_ == kFailuresShown) last_summary_ = now;
  } else {
    ++unreported_;
    if (now - last_summary_ >= kFailureSummaryInterval) summarise(now);
  }
  if (consecutive_ < kMaxConsecutiveFailures) return;
  unreported_ = 0;  // the error below says it all
  std::string first;
  for (const std::string& m : first_) first += "\n  " + m;
  throw sdk::ConfigError(fmt::format(
      "{}: {} samples in a row could not be used ({} in all), so the data has (almost) no usable sample; "
      "check the dataset's files. The first errors:{}",
      dataset_, consecutive_, total_, first));
}

}  // namespace kforge::image_text
