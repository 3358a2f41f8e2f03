// ClipSource: a map-style video-text dataset (clips addressable by index in a fixed order, so a sampler picks them
// and a resumed run finds the same ones), handing out where each clip is and its text; the clip is decoded later.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::video {

struct Clip {
  std::string path;  ///< the video file
  std::string caption;
  std::string prompt;  ///< empty when the sample has none
  std::string origin;  ///< what listed it (a CSV row, a manifest line), for warnings
};

class ClipSource {
 public:
  virtual ~ClipSource() = default;
  virtual int64_t size() const = 0;
  /// Clip `index` (0 <= index < size(), else sdk::Error); safe to call from several threads at once.
  virtual Clip clip(int64_t index) const = 0;
  /// One line for the log: format, root, clips.
  virtual std::string describe() const = 0;
};

}  // namespace kforge::video
