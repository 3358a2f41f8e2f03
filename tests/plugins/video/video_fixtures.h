// Test clips made by the ffmpeg CLI (testsrc patterns: every frame differs) in a temporary directory, once per
// process, and the CLI's own decoding of a clip (ffmpeg's scale filter, ffprobe's pts) as the reference frames.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::test {

/// 96x72 testsrc clips, 10 frames per second, 2 s (20 frames) unless said otherwise.
struct VideoClips {
  std::string dir;
  std::string h264_mp4;                 ///< libx264 (B-frames), yuv420p, index (moov) at the end
  std::string vp9_webm;                 ///< libvpx-vp9, yuv420p
  std::string bt709_mp4;                ///< libx264, tagged BT.709 (the colour matrix of HD video)
  std::string full_range_mp4;           ///< libx264, full-range YUV (yuvj420p)
  std::string ffv1_mkv;                 ///< FFV1 (lossless), yuv420p
  std::string vfr_mkv;                  ///< FFV1, pts (ms) 0, 100, 200, 300, 400, then every 300 from 500 to 4700
  std::string empty_mp4;                ///< an H.264 track with no samples (fragmented MP4 header, no fragment)
  std::string header_only_y4m;          ///< a YUV4MPEG2 header (a raw-video stream) with no frame
  std::string truncated_mp4;            ///< the first half of h264_mp4: the index is lost
  std::string truncated_faststart_mp4;  ///< an MP4 with its index first, cut in the middle of the frames
  std::string audio_wav;                ///< a sine tone, no video stream
  std::string text_file;                ///< not a media file
  std::string missing;                  ///< a path that does not exist
};

/// Made on first use; a failing ffmpeg command throws std::runtime_error with its output.
const VideoClips& video_clips();

/// Writes a 96x72 testsrc clip of `seconds` at 10 frames per second, H.264 in MP4, to `path` (its directory must
/// exist); std::runtime_error when ffmpeg fails.
void write_testsrc_clip(const std::string& path, int seconds);

/// What the ffmpeg CLI decodes: frame pts (seconds, from ffprobe) and the frames scaled by its scale filter
/// (flags=bilinear) to size x size rgb24.
struct CliFrames {
  std::vector<double> pts_s;
  at::Tensor rgb;  ///< uint8 [N, size, size, 3]
};
CliFrames cli_frames(const std::string& clip, int64_t size);

/// KempnerForge's rule on the CLI's pts: the first frame with pts >= target - 1e-3, else the last frame.
size_t cli_pick(const std::vector<double>& pts_s, double target);

/// The largest per-value difference between a decoded [3, S, S] frame and a CLI [S, S, 3] frame.
int max_channel_difference(const at::Tensor& decoded_chw, const at::Tensor& cli_hwc);

}  // namespace kforge::test
