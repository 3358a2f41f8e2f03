// The duration fallbacks, over plain numbers so each one can be tested without a file that lacks the others.
#include "video/clip_duration.h"

namespace kforge::video {

const char* to_string(DurationSource source) {
  switch (source) {
    case DurationSource::kStream:
      return "stream";
    case DurationSource::kContainer:
      return "container";
    case DurationSource::kFrameCount:
      return "frame count";
    case DurationSource::kUnknown:
      break;
  }
  return "unknown";
}

ClipDuration clip_duration(const DurationFields& fields) {
  if (fields.stream_duration > 0 && fields.time_base_num > 0 && fields.time_base_den > 0) {
    return {static_cast<double>(fields.stream_duration) * fields.time_base_num / fields.time_base_den,
            DurationSource::kStream};
  }
  if (fields.container_duration_us > 0) {
    return {static_cast<double>(fields.container_duration_us) / 1e6, DurationSource::kContainer};
  }
  if (fields.frame_count > 0 && fields.avg_rate_num > 0 && fields.avg_rate_den > 0) {
    return {static_cast<double>(fields.frame_count) * fields.avg_rate_den / fields.avg_rate_num,
            DurationSource::kFrameCount};
  }
  return {};
}

}  // namespace kforge::video
