// Progress: throttled percentage reports on stderr (\r updates on a TTY, a line per ~5% otherwise).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kforge::data {

class Progress {
 public:
  /// Silent when !enabled or total == 0.
  Progress(std::string label, uint64_t total, bool enabled);
  void update(uint64_t done);
  /// Prints the final 100% line (once).
  void finish();

 private:
  void print(uint64_t done, bool final);
  std::string label_;
  uint64_t total_;
  bool enabled_, tty_, finished_ = false;
  int last_step_ = -1;  ///< last 5% step printed (non-TTY)
  std::chrono::steady_clock::time_point last_print_{};
};

}  // namespace kforge::data
