#include "metrics/status_line.h"

#include <unistd.h>

#include <cstdio>

namespace kforge::metrics {

StatusLine::StatusLine(int64_t first_step, int64_t max_steps)
    : enabled_(::isatty(STDERR_FILENO) != 0),
      first_step_(first_step),
      max_steps_(max_steps),
      start_(std::chrono::steady_clock::now()) {}

StatusLine::~StatusLine() { clear(); }

void StatusLine::update(int64_t step, double loss) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double per_step = elapsed / static_cast<double>(std::max<int64_t>(1, step - first_step_));
  const auto eta = static_cast<int64_t>(per_step * static_cast<double>(max_steps_ - step));
  const int width = 30;
  const int filled = static_cast<int>(width * step / std::max<int64_t>(1, max_steps_));
  char bar[width + 1];
  for (int k = 0; k < width; ++k) bar[k] = k < filled ? '#' : '.';
  bar[width] = '\0';
  std::fprintf(stderr, "\r\033[K[%s] step %lld/%lld | loss %.4f | %.2f s/step | ETA %lldm%02llds", bar,
               static_cast<long long>(step), static_cast<long long>(max_steps_), loss, per_step,
               static_cast<long long>(eta / 60), static_cast<long long>(eta % 60));
  std::fflush(stderr);
}

void StatusLine::clear() {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace kforge::metrics
