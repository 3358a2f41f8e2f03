// The uniform sampling policy, with Python's round() (half to even) so frame counts match KempnerForge's.
#include "video/frame_timestamps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kforge::video {
namespace {

void check_policy(double fps, int min_frames, int max_frames) {
  if (!std::isfinite(fps) || fps <= 0) throw std::invalid_argument(fmt::format("[video] fps must be > 0, got {}", fps));
  if (min_frames < 1) throw std::invalid_argument(fmt::format("[video] min_frames must be >= 1, got {}", min_frames));
  if (max_frames < min_frames) {
    throw std::invalid_argument(fmt::format(
        "[video] max_frames must be >= min_frames, got max_frames {} < min_frames {}", max_frames, min_frames));
  }
}

}  // namespace

double round_half_even(double x) {
  const double below = std::floor(x);
  const double fraction = x - below;  // exact: x and floor(x) share the exponent range
  if (fraction < 0.5) return below;
  if (fraction > 0.5) return below + 1;
  return std::fmod(below, 2.0) == 0 ? below : below + 1;
}

std::vector<double> uniform_timestamps(double duration_s, double fps, int min_frames, int max_frames) {
  check_policy(fps, min_frames, max_frames);
  if (std::isnan(duration_s) || std::isinf(duration_s)) {
    throw std::invalid_argument(fmt::format("video duration must be finite, got {}", duration_s));
  }
  if (duration_s <= 0) return {0.0};
  // Clamped as a double first: round(duration * fps) may not fit an int.
  const double rounded = round_half_even(duration_s * fps);
  const int n = static_cast<int>(std::clamp(rounded, static_cast<double>(min_frames), static_cast<double>(max_frames)));
  if (n <= 1) return {0.0};
  const double step = duration_s / (n - 1);
  std::vector<double> timestamps(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) timestamps[static_cast<size_t>(i)] = i * step;
  return timestamps;
}

TimestampPolicy uniform_policy(double fps, int min_frames, int max_frames) {
  check_policy(fps, min_frames, max_frames);
  return [=](double duration_s) { return uniform_timestamps(duration_s, fps, min_frames, max_frames); };
}

}  // namespace kforge::video
