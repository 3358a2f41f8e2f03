// Progress: throttled percentage reports on stderr (\r updates on a TTY, a line per ~5% otherwise), with the
// text throughput and token count when given.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kforge::data {

class Progress {
 public:
  /// Silent when !enabled or total == 0.
  Progress(std::string label, uint64_t total, bool enabled);
  /// `done` of `total` (bytes of the input files); `text_bytes` (decompressed) and `tokens` so far add
  /// "N MB/s of text, T tokens" when non-zero.
  void update(uint64_t done, uint64_t text_bytes = 0, int64_t tokens = 0);
  /// Prints the final 100% line (once).
  void finish();

 private:
  void print(uint64_t done, bool final);
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  uint64_t text_bytes_ = 0;
  int64_t tokens_ = 0;
  std::string label_;
  uint64_t total_;
  bool enabled_, tty_, finished_ = false;
  int last_step_ = -1;  ///< last 5% step printed (non-TTY)
  std::chrono::steady_clock::time_point last_print_{};
};

}  // namespace kforge::data
