// Progress: stderr reporting, throttled by time on a TTY and by 5% steps in logs.
#include "data/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace kforge::data {

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 0), tty_(::isatty(STDERR_FILENO) == 1) {}

void Progress::update(uint64_t done, uint64_t text_bytes, int64_t tokens) {
  if (!enabled_ || finished_) return;
  text_bytes_ = text_bytes;
  tokens_ = tokens;
  if (tty_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_print_ < std::chrono::milliseconds(200)) return;
    last_print_ = now;
    print(done, false);
  } else {
    const int step = static_cast<int>(done * 20 / total_);  // 5% steps
    if (step <= last_step_ || step >= 20) return;
    last_step_ = step;
    print(done, false);
  }
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  print(total_, true);
}

void Progress::print(uint64_t done, bool final) {
  const double pct = 100.0 * static_cast<double>(done) / static_cast<double>(total_);
  std::string text = fmt::format("{}: {:5.1f}% ({:.1f} / {:.1f} MB)", label_, pct, done / 1e6, total_ / 1e6);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (text_bytes_ > 0 && seconds > 0) text += fmt::format(", {:.1f} MB/s of text", text_bytes_ / 1e6 / seconds);
  if (tokens_ > 0) text += fmt::format(", {} tokens", tokens_);
  if (tty_) {
    fmt::print(stderr, "\r{}{}", text, final ? "\n" : "");
  } else {
    fmt::print(stderr, "{}\n", text);
  }
  std::fflush(stderr);
}

}  // namespace kforge::data
