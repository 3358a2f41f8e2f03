// A clip's duration in seconds as KempnerForge's video_io reads it: the stream's duration x time_base, else the
// container's (microseconds, AV_TIME_BASE), else frame count / average frame rate.
#pragma once

#include <cstdint>

namespace kforge::video {

enum class DurationSource { kStream, kContainer, kFrameCount, kUnknown };

const char* to_string(DurationSource source);

/// What the container states; a duration or count <= 0 (FFmpeg's AV_NOPTS_VALUE is negative) or a rational with a
/// numerator or denominator <= 0 counts as missing.
struct DurationFields {
  int64_t stream_duration = 0;  ///< in time_base units
  int time_base_num = 0;
  int time_base_den = 0;
  int64_t container_duration_us = 0;  ///< AVFormatContext::duration, in 1/1000000 s
  int64_t frame_count = 0;            ///< AVStream::nb_frames
  int avg_rate_num = 0;               ///< AVStream::avg_frame_rate, frames per second
  int avg_rate_den = 0;
};

struct ClipDuration {
  double seconds = 0;  ///< 0 when unknown
  DurationSource source = DurationSource::kUnknown;
};

/// The first of stream, container and frame-count durations that is present.
ClipDuration clip_duration(const DurationFields& fields);

}  // namespace kforge::video
