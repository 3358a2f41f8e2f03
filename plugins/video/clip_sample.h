// One clip to model inputs: its frames at the sampler's times, scaled to [0, 1], normalised and zero-padded to
// max_frames, with a frame mask and the frames' times; its prompt and caption as the image-text path encodes them.
// A clip that cannot be decoded still gives a sample of the same shapes, with no real frame and no loss.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "image_text_io/image_transform.h"
#include "image_text_io/text_encoding.h"
#include "kforge/sdk/image_text_dataset.h"
#include "video/clip_source.h"

namespace kforge::video {

/// The decode deadline of one clip, in seconds: generous, a stuck read rather than a slow clip.
inline constexpr double kClipDeadlineSeconds = 60.0;
/// The default cap on a clip's file size ([video] max_clip_bytes): a clip of minutes at high bit rate is well below
/// it; a file above it is not a training clip (the decoder reads only what the frames need, so memory is not the
/// reason: refusing a device or an archive named by mistake is).
inline constexpr int64_t kDefaultMaxClipBytes = int64_t{2} << 30;

struct ClipOptions {
  int64_t frame_size = 0;  ///< S: frames are S x S
  int64_t max_frames = 0;  ///< F: pixel_values [F, 3, S, S]
  image_text::Normalization normalization = image_text::siglip_normalization();
  image_text::TextOptions text;
  image_text::Tokenize tokenize;
  /// The frame sampler: times (seconds) to take for a clip of the given duration, 1 to max_frames of them.
  std::function<std::vector<double>(double duration_s)> frame_times;
  double deadline_s = kClipDeadlineSeconds;
  int64_t max_clip_bytes = kDefaultMaxClipBytes;  ///< clips are read from regular files of at most this size
};

struct ClipSample {
  sdk::ImageTextSample sample;
  std::string failure;  ///< why the clip could not be decoded (its origin, file and reason); empty when it was
};

/// The sample of `clip`. A VideoError (missing, not a regular file or larger than max_clip_bytes, not a video,
/// truncated, no frames, past the deadline) gives a sample
/// without real frames whose labels are all -100, and `failure`; a frame sampler that gives no time or more than
/// max_frames throws sdk::Error.
ClipSample clip_sample(const Clip& clip, const ClipOptions& options);

}  // namespace kforge::video
