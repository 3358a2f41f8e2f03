// Which instants of a clip to decode: KempnerForge's "uniform" policy (data/video_io.py sample_timestamps), n frames
// evenly spaced over [0, duration] with n = clamp(round(duration * fps), min_frames, max_frames).
#pragma once

#include <functional>
#include <vector>

namespace kforge::video {

/// Rounds half to even, as Python's round(x) (2.5 -> 2, 3.5 -> 4), whatever the floating-point rounding mode.
double round_half_even(double x);

/// Target timestamps in seconds: {0.0} when duration_s <= 0 or when n <= 1, else n values i * duration_s / (n - 1)
/// for i = 0..n-1 (the first and last frame always included). Throws std::invalid_argument naming the [video] key
/// when fps <= 0, min_frames < 1, max_frames < min_frames, or an argument is not finite.
std::vector<double> uniform_timestamps(double duration_s, double fps, int min_frames, int max_frames);

/// A sampling policy: the target timestamps (seconds) for a clip of the given duration.
using TimestampPolicy = std::function<std::vector<double>(double duration_s)>;

/// uniform_timestamps with these settings; the settings are validated here, once.
TimestampPolicy uniform_policy(double fps, int min_frames, int max_frames);

}  // namespace kforge::video
