// JsonlManifestSource: a LLaVA-style JSON Lines manifest, one {"image": "relative/path.jpg", "text": "...",
// "prompt": "..."} object per line ("prompt" optional), image paths relative to the manifest's directory (and under
// it) or absolute. The manifest is read once (blank lines skipped); sample i is its i-th object.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "image_text_io/image_decode.h"
#include "image_text_io/image_text_source.h"

namespace kforge::image_text {

struct ManifestLine {
  int64_t line = 0;  ///< 1-based line number in the manifest
  std::string image;
  std::string text;
  std::string prompt;
};

/// Parses one manifest line; throws sdk::Error naming `file`, `line` and what is wrong.
ManifestLine parse_manifest_line(std::string_view json, const std::string& file, int64_t line);

class JsonlManifestSource : public ImageTextSource {
 public:
  /// Reads the manifest; a line that is not such an object, or whose relative image path leaves the manifest's
  /// directory, is an error naming the file and line. Images are read up to `max_image_bytes` ([vlm]
  /// max_image_bytes).
  explicit JsonlManifestSource(const std::filesystem::path& manifest,
                               int64_t max_image_bytes = kDefaultMaxImageBytes);

  int64_t size() const override { return static_cast<int64_t>(lines_.size()); }
  /// Reads the image file; a missing one, one that is not a regular file or larger than max_image_bytes throws
  /// SampleError.
  RawSample load(int64_t index) const override;

 private:
  std::filesystem::path manifest_;
  int64_t max_image_bytes_;
  std::vector<ManifestLine> lines_;
  std::vector<std::filesystem::path> images_;  ///< each line's image, resolved

};

}  // namespace kforge::image_text
