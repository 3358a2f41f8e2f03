// ImageTextSource: a map-style image-text dataset (samples addressable by index in a fixed order, so a sampler
// picks them and a resumed run finds the same ones), handing out each sample's undecoded bytes.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::image_text {

struct RawSample {
  std::string origin;  ///< the shard or manifest it came from
  std::string key;     ///< the WebDataset key, or the manifest's line number and image path
  std::string image;   ///< encoded image bytes (JPEG, PNG or WebP)
  std::string caption;
  std::string prompt;  ///< empty when the sample has none
};

class ImageTextSource {
 public:
  virtual ~ImageTextSource() = default;
  virtual int64_t size() const = 0;
  /// Sample `index` (0 <= index < size()); safe to call from several threads at once. Throws SampleError when
  /// this one sample cannot be read (it is skipped), another error when the source itself is broken.
  virtual RawSample load(int64_t index) const = 0;
};

}  // namespace kforge::image_text
