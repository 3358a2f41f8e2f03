// Decoding the frames of one video clip at target timestamps, as KempnerForge's video_io (PyAV) does: one forward
// pass over the best video stream, each target taking the first frame whose pts (seconds) is >= target - 1e-3, the
// targets past the last frame taking the last frame; frames are scaled to size x size RGB by libswscale (bilinear).
//
// Frames come out as uint8 [F, 3, S, S] (RGB, channel-first, unnormalised 0..255): a quarter of float32's memory
// while clips wait in a prefetch queue, and the values the scaler produced, so the dataset (or the model, on the
// device) applies its own [0, 1] scaling and normalisation once, in float, on the batch.
//
// Use: ClipDecoder clip(path, options); policy(clip.duration_s()) gives the targets; clip.decode(targets). Or
// decode_clip(path, policy, options) for the three in one. Failures throw VideoError naming the file.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "video/clip_duration.h"
#include "video/frame_timestamps.h"
#include "video/video_error.h"

namespace kforge::video {

/// A frame at pts p is taken for target t when p >= t - kTimestampTolerance (seconds).
inline constexpr double kTimestampTolerance = 1e-3;

/// Frames above this many pixels are refused (a hostile header, not a video).
inline constexpr int64_t kMaxFramePixels = int64_t{1} << 28;

struct DecodeOptions {
  int64_t frame_size = 224;  ///< S, the side of the square output frames ([video] frame_size)
  /// Opening, probing and decoding a clip must end within this many seconds of the ClipDecoder's construction,
  /// else VideoError kDeadline (a stuck read is interrupted through FFmpeg's interrupt callback). Infinity: none.
  double timeout_s = 60.0;
  /// Decoder threads per clip: 1, since the data path decodes clips in parallel.
  int threads = 1;
  /// The clock the deadline is measured on; empty: std::chrono::steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

struct DecodedClip {
  at::Tensor frames;               ///< uint8 [F, 3, S, S], RGB; F = the number of targets, in the targets' order
  std::vector<double> timestamps;  ///< pts in seconds of the frame each target took
};

class ClipDecoder {
 public:
  /// Opens `path`, reads its stream info and opens the decoder of its best video stream. Throws VideoError (kOpen,
  /// kNoVideoStream, kDecode, kDeadline), std::invalid_argument for bad options.
  ClipDecoder(const std::string& path, DecodeOptions options = {});
  ~ClipDecoder();
  ClipDecoder(ClipDecoder&&) noexcept;
  ClipDecoder& operator=(ClipDecoder&&) noexcept;

  const std::string& path() const;
  /// Seconds (see clip_duration.h for the fallbacks); 0 when the container states none.
  double duration_s() const;
  DurationSource duration_source() const;

  /// Decodes the frames for `targets` (seconds, any order, finite, not empty) in one pass from the start; stops
  /// reading once every target has its frame. Once per ClipDecoder (std::logic_error after). Throws VideoError
  /// (kDecode, kNoFrames, kDeadline).
  DecodedClip decode(const std::vector<double>& targets);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Opens `path`, asks `policy` for the targets of its duration and decodes them.
DecodedClip decode_clip(const std::string& path, const TimestampPolicy& policy, const DecodeOptions& options = {});

}  // namespace kforge::video
