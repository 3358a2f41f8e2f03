// A decoded frame (any pixel format and size) to a square RGB24 image by libswscale's bilinear scaler, written into
// a [3, size, size] uint8 tensor; the scaler is rebuilt only when the input's format, size or colour space change.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "video/ffmpeg_handles.h"

namespace kforge::video {

class FrameConverter {
 public:
  /// `what` names the clip in errors.
  FrameConverter(int64_t size, std::string what);

  /// Scales `frame` into `out` ([3, size, size] uint8). Throws VideoError (kDecode) for a format swscale cannot read.
  void convert(const AVFrame& frame, const at::Tensor& out);

 private:
  struct Input {
    int width = 0;
    int height = 0;
    int format = -1;
    int colorspace = -1;
    int color_range = -1;
    bool operator==(const Input& other) const {
      return width == other.width && height == other.height && format == other.format &&
             colorspace == other.colorspace && color_range == other.color_range;
    }
  };

  void rebuild(const Input& input);

  int64_t size_;
  std::string what_;
  Input input_;
  SwsContextPtr scaler_;
  int row_bytes_;             ///< the RGB24 rows' stride, aligned for swscale's SIMD writers
  std::vector<uint8_t> rgb_;  ///< size rows of row_bytes_
};

}  // namespace kforge::video
