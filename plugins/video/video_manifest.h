// VideoManifestSource: a JSON Lines manifest at [video] data_root, one {"video": "clip.mp4", "text": "caption",
// "prompt": "..."} object per line ("prompt" optional, else [video] prompt), video paths relative to the manifest's
// directory (and under it) or absolute. The manifest is read once (blank lines skipped, up to max_samples clips); clip i is its i-th
// object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "video/clip_source.h"

namespace kforge::video {

class VideoManifestSource : public ClipSource {
 public:
  /// Reads `manifest`. Throws sdk::ConfigError naming `root_key` (the config key of the path) for a path that is not a
  /// readable .jsonl file or a manifest without clips, naming the file and line for a line that is not such an object
  /// or whose relative path leaves the manifest's directory,
  /// and naming [video] max_samples when it is negative.
  VideoManifestSource(const std::string& manifest, const std::string& prompt, int64_t max_samples,
                      const std::string& root_key = "[video] data_root");

  int64_t size() const override { return static_cast<int64_t>(clips_.size()); }
  Clip clip(int64_t index) const override;
  std::string describe() const override;

 private:
  std::string manifest_;
  std::vector<Clip> clips_;
};

}  // namespace kforge::video
