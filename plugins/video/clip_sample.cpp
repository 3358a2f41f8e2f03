// Decode, normalise and pad the frames; encode the text; a decode failure empties the frames and the loss.
#include "video/clip_sample.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "image_text_io/regular_file.h"
#include "kforge/sdk/error.h"
#include "video/clip_decoder.h"
#include "video/video_error.h"

namespace kforge::video {

ClipSample clip_sample(const Clip& clip, const ClipOptions& options) {
  const image_text::EncodedText text =
      image_text::encode_text(options.tokenize, clip.prompt, clip.caption, options.text);
  ClipSample out;
  sdk::ImageTextSample& s = out.sample;
  s.input_ids = at::tensor(text.input_ids, at::kLong);
  s.labels = at::tensor(text.labels, at::kLong);
  const int64_t f = options.max_frames;
  const int64_t size = options.frame_size;
  s.pixel_values = at::zeros({f, 3, size, size}, at::kFloat);
  s.frame_mask = at::zeros({f}, at::kBool);
  s.frame_times = at::zeros({f}, at::kFloat);
  DecodedClip decoded;
  try {
    DecodeOptions decode;
    decode.frame_size = size;
    decode.timeout_s = options.deadline_s;
    if (const std::string refusal =
            image_text::data_file_refusal(clip.path, options.max_clip_bytes, "[video] max_clip_bytes");
        !refusal.empty()) {
      throw VideoError(VideoError::Kind::kOpen, fmt::format("{}: {}", clip.path, refusal));
    }
    ClipDecoder decoder(clip.path, decode);
    const std::vector<double> times = options.frame_times(decoder.duration_s());
    if (times.empty() || static_cast<int64_t>(times.size()) > f) {
      throw sdk::Error(
          fmt::format("{}: the frame sampler gave {} frame times for a clip of {} s; expected 1 to "
                      "[video] max_frames = {}",
                      clip.path, times.size(), decoder.duration_s(), f));
    }
    decoded = decoder.decode(times);
  } catch (const VideoError& e) {
    s.labels.fill_(image_text::kIgnoreLabel);
    out.failure = fmt::format("{}: {}", clip.origin, e.what());
    return out;
  }
  const int64_t n = decoded.frames.size(0);
  const auto& norm = options.normalization;
  const at::Tensor mean = at::tensor(std::vector<float>(norm.mean.begin(), norm.mean.end())).view({1, 3, 1, 1});
  const at::Tensor std = at::tensor(std::vector<float>(norm.std.begin(), norm.std.end())).view({1, 3, 1, 1});
  s.pixel_values.narrow(0, 0, n).copy_((decoded.frames.to(at::kFloat) / 255.0f - mean) / std);
  s.frame_mask.narrow(0, 0, n).fill_(true);
  s.frame_times.narrow(0, 0, n).copy_(at::tensor(decoded.timestamps, at::kDouble));
  return out;
}

}  // namespace kforge::video
