// VideoError: one clip cannot be used (missing, not a video, corrupt, truncated, no frames, or too slow to decode);
// the message names the file and what failed, and kind() tells which, so a dataset can keep going (no loss for that
// sample) where any other error stops the data path.
#pragma once

#include <string>

#include "kforge/sdk/error.h"

namespace kforge::video {

class VideoError : public sdk::Error {
 public:
  enum class Kind {
    kOpen,           ///< missing or unreadable file, unknown or corrupt container (incl. a lost index)
    kNoVideoStream,  ///< a readable container without a video stream (audio only, text, a cover picture)
    kDecode,         ///< a packet the demuxer or the decoder rejects, an unsupported pixel format
    kNoFrames,       ///< a video stream from which no frame was decoded
    kDeadline,       ///< DecodeOptions::timeout_s passed before the clip was decoded
  };

  VideoError(Kind kind, const std::string& message) : sdk::Error(message), kind_(kind) {}

  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace kforge::video
