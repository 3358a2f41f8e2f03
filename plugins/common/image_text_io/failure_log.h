// FailureLog: what a decode stream does with the samples it cannot use (a corrupt or missing image, a clip that does
// not decode). It warns about the first few, then sums the rest up at most once an interval, so bad data cannot
// flood the log; and it stops the data path with sdk::ConfigError (exit 2) naming the dataset and its first errors
// once too many samples in a row failed, so data without a usable sample cannot spin forever.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "image_text_io/warn.h"

namespace kforge::image_text {

/// Consecutive unusable samples that stop the data path. A dataset with half its samples bad reaches it by chance
/// with probability 2^-100 per sample; one with none usable within a fraction of a second of decoding.
inline constexpr int64_t kMaxConsecutiveFailures = 100;
/// Failures warned about one by one; the rest are counted.
inline constexpr int64_t kFailuresShown = 5;
/// At most one summary of the failures not shown per this interval.
inline constexpr std::chrono::seconds kFailureSummaryInterval{30};

class FailureLog {
 public:
  using Clock = std::chrono::steady_clock;

  /// `dataset` names the data in messages (its describe() line).
  FailureLog(std::string dataset, Warn warn);
  /// Sums up the failures not yet reported.
  ~FailureLog();
  FailureLog(const FailureLog&) = delete;
  FailureLog& operator=(const FailureLog&) = delete;

  /// A sample could not be used (`message` says which and why, and what became of it): warns (rate-limited), and
  /// throws sdk::ConfigError when it is the kMaxConsecutiveFailures-th in a row.
  void failed(const std::string& message, Clock::time_point now = Clock::now());
  /// A usable sample: the run of failures ends.
  void succeeded() { consecutive_ = 0; }

 private:
  void summarise(Clock::time_point now);

  std::string dataset_;
  Warn warn_;
  int64_t total_ = 0;
  int64_t consecutive_ = 0;
  int64_t unreported_ = 0;  ///< failures neither shown nor summed up yet
  Clock::time_point last_summary_{};
  std::vector<std::string> first_;  ///< the first kFailuresShown messages
};

}  // namespace kforge::image_text
