// sws_scale to packed RGB24 (the format the ffmpeg CLI's -pix_fmt rgb24 gives), then a permute into channel-first
// planes.
#include "video/frame_converter.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "video/video_error.h"

namespace kforge::video {

FrameConverter::FrameConverter(int64_t size, std::string what)
    : size_(size), what_(std::move(what)), row_bytes_(static_cast<int>((size * 3 + 63) / 64 * 64)) {
  rgb_.resize(static_cast<size_t>(row_bytes_) * static_cast<size_t>(size_));
}

void FrameConverter::rebuild(const Input& input) {
  const auto format = static_cast<AVPixelFormat>(input.format);
  const int size = static_cast<int>(size_);
  scaler_.reset(sws_getContext(input.width, input.height, format, size, size, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr,
                               nullptr, nullptr));
  if (!scaler_) {
    const char* name = av_get_pix_fmt_name(format);
    throw VideoError(VideoError::Kind::kDecode,
                     fmt::format("{}: cannot convert {}x{} frames of pixel format {} to RGB", what_, input.width,
                                 input.height, name != nullptr ? name : "unknown"));
  }
  // The frame's colour matrix and range, as the ffmpeg CLI's scale filter takes them (unspecified: BT.601, and
  // the range the pixel format implies); the output is full-range RGB.
  int* inverse_table = nullptr;
  int* table = nullptr;
  int source_full = 0, destination_full = 0, brightness = 0, contrast = 0, saturation = 0;
  if (sws_getColorspaceDetails(scaler_.get(), &inverse_table, &source_full, &table, &destination_full, &brightness,
                               &contrast, &saturation) >= 0) {
    if (input.color_range != AVCOL_RANGE_UNSPECIFIED) source_full = input.color_range == AVCOL_RANGE_JPEG ? 1 : 0;
    sws_setColorspaceDetails(scaler_.get(), sws_getCoefficients(input.colorspace), source_full, table, destination_full,
                             brightness, contrast, saturation);
  }
  input_ = input;
}

void FrameConverter::convert(const AVFrame& frame, const at::Tensor& out) {
  const Input input{frame.width, frame.height, frame.format, frame.colorspace, frame.color_range};
  if (!scaler_ || !(input == input_)) rebuild(input);
  uint8_t* destination[4] = {rgb_.data(), nullptr, nullptr, nullptr};
  const int destination_stride[4] = {row_bytes_, 0, 0, 0};
  const int rows =
      sws_scale(scaler_.get(), frame.data, frame.linesize, 0, frame.height, destination, destination_stride);
  if (rows != size_) {
    throw VideoError(VideoError::Kind::kDecode, fmt::format("{}: scaling a {}x{} frame to {}x{} RGB failed", what_,
                                                            frame.width, frame.height, size_, size_));
  }
  const at::Tensor rows_rgb = at::from_blob(rgb_.data(), {size_, size_, 3}, {row_bytes_, 3, 1}, at::kByte);
  out.copy_(rows_rgb.permute({2, 0, 1}));
}

}  // namespace kforge::video
