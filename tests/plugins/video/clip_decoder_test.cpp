// Decoded frames against the ffmpeg CLI's on the same clips (the same libavcodec decodes the same bitstream and the
// same libswscale scales it with the same flags, so they must agree exactly), which frame each target takes on a
// variable-frame-rate clip, and the durations the containers give.
#include "video/clip_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "video_fixtures.h"

namespace kforge::test {
namespace {

using video::ClipDecoder;
using video::DecodedClip;
using video::DecodeOptions;
using video::DurationSource;

constexpr int64_t kSize = 40;  // from 96x72: a different, non-integer ratio on each axis

DecodeOptions options_of_size(int64_t size) {
  DecodeOptions options;
  options.frame_size = size;
  return options;
}

// Decodes `targets` from `clip` and checks every frame and timestamp against the CLI's frame the rule picks;
// the largest difference seen is returned.
int decode_against_cli(const std::string& clip, const std::vector<double>& targets, int64_t size) {
  const CliFrames cli = cli_frames(clip, size);
  EXPECT_EQ(cli.pts_s.size(), 20u) << clip;
  // Every frame differs from the next, so a target that takes a neighbour of its frame fails below.
  for (int64_t i = 1; i < cli.rgb.size(0); ++i) {
    EXPECT_FALSE(at::equal(cli.rgb[i], cli.rgb[i - 1])) << clip << " frames " << i - 1 << " and " << i;
  }
  ClipDecoder decoder(clip, options_of_size(size));
  const DecodedClip decoded = decoder.decode(targets);
  EXPECT_EQ(decoded.frames.sizes(), (std::vector<int64_t>{static_cast<int64_t>(targets.size()), 3, size, size}));
  EXPECT_EQ(decoded.frames.scalar_type(), at::kByte);
  EXPECT_TRUE(decoded.frames.is_contiguous());
  int worst = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const size_t pick = cli_pick(cli.pts_s, targets[i]);
    EXPECT_DOUBLE_EQ(decoded.timestamps[i], cli.pts_s[pick]) << clip << " target " << targets[i];
    const int difference =
        max_channel_difference(decoded.frames[static_cast<int64_t>(i)], cli.rgb[static_cast<int64_t>(pick)]);
    EXPECT_EQ(difference, 0) << clip << " target " << targets[i] << " (CLI frame " << pick << ")";
    worst = std::max(worst, difference);
  }
  return worst;
}

// The policy's targets for the clip, then targets between frames, on a frame, within the tolerance of the next
// frame, past the end, and out of order.
std::vector<double> targets_for(const std::string& clip) {
  std::vector<double> targets = video::uniform_timestamps(ClipDecoder(clip).duration_s(), 2.0, 4, 16);
  targets.insert(targets.end(), {0.55, 1.0, 1.0995, 0.0, 7.5, 0.31});
  return targets;
}

// Lossless FFV1: the CLI and the library decode the same YUV planes and scale them with the same swscale flags.
TEST(ClipDecoder, LosslessFfv1FramesEqualTheCliFrames) {
  const std::string& clip = video_clips().ffv1_mkv;
  EXPECT_EQ(decode_against_cli(clip, targets_for(clip), kSize), 0);
  EXPECT_EQ(decode_against_cli(clip, {0.0, 1.9}, 128), 0);  // upscaling too
}

// H.264 and VP9 decoding is bit-exact (the standards define the decoder's output; libavcodec's SIMD and C paths
// agree), and both sides run this libavcodec on this file, so the lossy codecs also give a difference of 0: any
// difference would come from scaling (flags, colour matrix, range), which is what is compared.
TEST(ClipDecoder, H264Mp4FramesEqualTheCliFrames) {
  const std::string& clip = video_clips().h264_mp4;
  EXPECT_EQ(decode_against_cli(clip, targets_for(clip), kSize), 0);
}

TEST(ClipDecoder, Vp9WebmFramesEqualTheCliFrames) {
  const std::string& clip = video_clips().vp9_webm;
  EXPECT_EQ(decode_against_cli(clip, targets_for(clip), kSize), 0);
}

// The CLI's scale filter converts with the matrix and range the frames are tagged with (here BT.709, which HD video
// uses, and full range, whose 0..255 luma the BT.601 limited-range default would clip): so does the decoder.
TEST(ClipDecoder, TaggedColourMatrixAndRangeAreUsedAsTheCliUsesThem) {
  for (const std::string& clip : {video_clips().bt709_mp4, video_clips().full_range_mp4}) {
    EXPECT_EQ(decode_against_cli(clip, {0.0, 0.75, 1.5, 2.0}, kSize), 0) << clip;
  }
}

TEST(ClipDecoder, VariableFrameRateTargetsTakeTheFirstFrameAtOrAfterThem) {
  // Frames at 0, 0.1, 0.2, 0.3, 0.4, then 0.5, 0.8, 1.1, ... 4.7 s.
  const std::string& clip = video_clips().vfr_mkv;
  const std::vector<double> targets = {
      0.0,     // frame 0
      0.0995,  // before 0.1, within nothing: the frame at 0.1
      0.1009,  // after 0.1 but within the 1 ms tolerance: still the frame at 0.1
      0.1011,  // past the tolerance: the frame at 0.2
      0.6,     // in the 0.5 -> 0.8 gap: 0.8
      0.5,     // out of order: 0.5
      1.1,     // exactly a frame
      3.0,     // 2.9 -> 3.2 gap: 3.2
      4.7,     // the last frame
      4.75,    // past the last frame: the last frame
      100.0,   // far past the end: the last frame
      -1.0,    // before the start: the first frame
  };
  const std::vector<double> expected = {0.0, 0.1, 0.1, 0.2, 0.8, 0.5, 1.1, 3.2, 4.7, 4.7, 4.7, 0.0};
  ClipDecoder decoder(clip, options_of_size(kSize));
  const DecodedClip decoded = decoder.decode(targets);
  ASSERT_EQ(decoded.timestamps.size(), expected.size());
  const CliFrames cli = cli_frames(clip, kSize);
  ASSERT_EQ(cli.pts_s.size(), 20u);
  for (size_t i = 0; i < targets.size(); ++i) {
    EXPECT_DOUBLE_EQ(decoded.timestamps[i], expected[i]) << "target " << targets[i];
    // The frame whose pts is the expected one, found in the CLI's list by value.
    const auto at_pts = std::find_if(cli.pts_s.begin(), cli.pts_s.end(),
                                     [&](double pts) { return std::abs(pts - expected[i]) < 1e-9; });
    ASSERT_NE(at_pts, cli.pts_s.end()) << expected[i];
    EXPECT_EQ(max_channel_difference(decoded.frames[static_cast<int64_t>(i)], cli.rgb[at_pts - cli.pts_s.begin()]), 0)
        << "target " << targets[i];
  }
}

TEST(ClipDecoder, DurationFromStreamElseContainer) {
  ClipDecoder mp4(video_clips().h264_mp4);  // MP4 states each track's duration
  EXPECT_EQ(mp4.duration_source(), DurationSource::kStream);
  EXPECT_DOUBLE_EQ(mp4.duration_s(), 2.0);
  ClipDecoder webm(video_clips().vp9_webm);  // Matroska/WebM only the segment's
  EXPECT_EQ(webm.duration_source(), DurationSource::kContainer);
  EXPECT_DOUBLE_EQ(webm.duration_s(), 2.0);
  ClipDecoder vfr(video_clips().vfr_mkv);  // at least up to the last frame's pts
  EXPECT_EQ(vfr.duration_source(), DurationSource::kContainer);
  EXPECT_GE(vfr.duration_s(), 4.7);
  EXPECT_LE(vfr.duration_s(), 5.0);
  EXPECT_EQ(vfr.path(), video_clips().vfr_mkv);
}

TEST(ClipDecoder, DecodeClipAppliesThePolicyToTheDuration) {
  // 2 s at 2 fps: 4 targets 0, 2/3, 4/3, 2 -> the frames at 0, 0.7, 1.4 and (past the last, 1.9) the last.
  const DecodedClip decoded =
      video::decode_clip(video_clips().h264_mp4, video::uniform_policy(2.0, 4, 16), options_of_size(24));
  EXPECT_EQ(decoded.frames.sizes(), (std::vector<int64_t>{4, 3, 24, 24}));
  ASSERT_EQ(decoded.timestamps.size(), 4u);
  EXPECT_DOUBLE_EQ(decoded.timestamps[0], 0.0);
  EXPECT_DOUBLE_EQ(decoded.timestamps[1], 0.7);
  EXPECT_DOUBLE_EQ(decoded.timestamps[2], 1.4);
  EXPECT_DOUBLE_EQ(decoded.timestamps[3], 1.9);
}

TEST(ClipDecoder, MisuseIsRefused) {
  ClipDecoder decoder(video_clips().ffv1_mkv);
  EXPECT_THROW(decoder.decode({}), std::invalid_argument);
  ClipDecoder twice(video_clips().ffv1_mkv);
  twice.decode({0.0});
  EXPECT_THROW(twice.decode({0.0}), std::logic_error);
  ClipDecoder not_finite(video_clips().ffv1_mkv);
  EXPECT_THROW(not_finite.decode({0.0, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  try {
    ClipDecoder zero_size(video_clips().ffv1_mkv, options_of_size(0));
    ADD_FAILURE() << "frame_size 0 accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("[video] frame_size"), std::string::npos) << error.what();
  }
  DecodeOptions negative_timeout;
  negative_timeout.timeout_s = -1;
  EXPECT_THROW(ClipDecoder(video_clips().ffv1_mkv, negative_timeout), std::invalid_argument);
}

}  // namespace
}  // namespace kforge::test
