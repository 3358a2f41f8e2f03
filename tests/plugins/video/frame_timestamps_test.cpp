// The uniform policy pinned to KempnerForge's sample_timestamps (values worked out by hand from its definition:
// n = clamp(round(duration * fps), min, max), Python's round half to even, step = duration / (n - 1)), and the
// duration fallbacks over plain numbers.
#include "video/frame_timestamps.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "video/clip_duration.h"

namespace kforge::test {
namespace {

using video::round_half_even;
using video::uniform_timestamps;

void expect_timestamps(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(actual[i], expected[i]) << "timestamp " << i;
}

// The message of the std::invalid_argument `call` throws ("" when it throws none).
template <typename Call>
std::string invalid_argument_message(Call call) {
  try {
    call();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(FrameTimestamps, NoDurationGivesTheFirstFrameOnly) {
  expect_timestamps(uniform_timestamps(0.0, 2.0, 4, 16), {0.0});
  expect_timestamps(uniform_timestamps(-3.5, 2.0, 4, 16), {0.0});
  expect_timestamps(uniform_timestamps(-0.0, 2.0, 4, 16), {0.0});
}

TEST(FrameTimestamps, OneFrameWhenTheCountIsOne) {
  expect_timestamps(uniform_timestamps(7.0, 2.0, 1, 1), {0.0});
  // round(0.2 * 2) = 0, raised to min_frames 1: still one frame, at 0 (not at the end).
  expect_timestamps(uniform_timestamps(0.2, 2.0, 1, 16), {0.0});
}

TEST(FrameTimestamps, WithinTheBoundsTheCountIsDurationTimesFps) {
  // 3 s at 2 fps: 6 frames, 0.6 s apart, the last at the end.
  expect_timestamps(uniform_timestamps(3.0, 2.0, 4, 16), {0.0, 0.6, 1.2, 1.8, 2.4, 3.0});
  // 2.2 s at 2 fps: round(4.4) = 4.
  expect_timestamps(uniform_timestamps(2.2, 2.0, 1, 16), {0.0, 2.2 / 3, 4.4 / 3, 2.2});
  // 2.3 s at 2 fps: round(4.6) = 5.
  expect_timestamps(uniform_timestamps(2.3, 2.0, 1, 16), {0.0, 0.575, 1.15, 1.725, 2.3});
}

TEST(FrameTimestamps, RoundsHalfToEvenAsPython) {
  EXPECT_EQ(uniform_timestamps(2.5, 1.0, 1, 16).size(), 2u);   // round(2.5) = 2 (half away from zero: 3)
  EXPECT_EQ(uniform_timestamps(3.5, 1.0, 1, 16).size(), 4u);   // round(3.5) = 4
  EXPECT_EQ(uniform_timestamps(4.5, 1.0, 1, 16).size(), 4u);   // round(4.5) = 4
  EXPECT_EQ(uniform_timestamps(1.25, 2.0, 1, 16).size(), 2u);  // round(2.5) = 2
  EXPECT_EQ(uniform_timestamps(2.75, 2.0, 1, 16).size(), 6u);  // round(5.5) = 6
  expect_timestamps(uniform_timestamps(2.5, 1.0, 1, 16), {0.0, 2.5});

  EXPECT_EQ(round_half_even(0.5), 0.0);
  EXPECT_EQ(round_half_even(1.5), 2.0);
  EXPECT_EQ(round_half_even(2.5), 2.0);
  EXPECT_EQ(round_half_even(-2.5), -2.0);
  EXPECT_EQ(round_half_even(-3.5), -4.0);
  EXPECT_EQ(round_half_even(2.4999999999999996), 2.0);   // the double below 2.5
  EXPECT_EQ(round_half_even(0.49999999999999994), 0.0);  // std::round's classic trap
  EXPECT_EQ(round_half_even(2.5000000000000004), 3.0);
  EXPECT_EQ(round_half_even(4503599627370497.0), 4503599627370497.0);  // 2^52 + 1: already whole
}

TEST(FrameTimestamps, ShortClipsAreRaisedToMinFrames) {
  // KempnerForge's defaults (fps 2, 4..16 frames): 1 s gives round(2) = 2, raised to 4.
  expect_timestamps(uniform_timestamps(1.0, 2.0, 4, 16), {0.0, 1.0 / 3, 2.0 / 3, 1.0});
  // A clip of a single frame's length (0.04 s at 25 fps) still gets 4 targets over it.
  expect_timestamps(uniform_timestamps(0.04, 2.0, 4, 16), {0.0, 0.04 / 3, 0.08 / 3, 0.04});
}

TEST(FrameTimestamps, LongClipsAreCappedAtMaxFrames) {
  const std::vector<double> timestamps = uniform_timestamps(100.0, 2.0, 4, 16);
  ASSERT_EQ(timestamps.size(), 16u);
  for (size_t i = 0; i < timestamps.size(); ++i) EXPECT_DOUBLE_EQ(timestamps[i], i * (100.0 / 15));
  // The shipped WebVid config: exactly 8 frames of any clip.
  expect_timestamps(uniform_timestamps(14.0, 2.0, 8, 8), {0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0});
  // A day-long clip: round(172800) does not reach an int overflow before the cap.
  EXPECT_EQ(uniform_timestamps(86400.0, 2.0, 4, 16).size(), 16u);
  EXPECT_EQ(uniform_timestamps(1e300, 2.0, 4, 16).size(), 16u);
}

TEST(FrameTimestamps, FirstAndLastFramesAreAlwaysIncluded) {
  for (const double duration : {0.1, 0.75, 1.9, 3.3, 10.0, 61.7, 3600.0}) {
    const std::vector<double> timestamps = uniform_timestamps(duration, 2.0, 4, 16);
    ASSERT_GE(timestamps.size(), 4u) << duration;
    EXPECT_EQ(timestamps.front(), 0.0) << duration;
    EXPECT_DOUBLE_EQ(timestamps.back(), duration) << duration;
    for (size_t i = 1; i < timestamps.size(); ++i) EXPECT_GT(timestamps[i], timestamps[i - 1]) << duration;
  }
}

TEST(FrameTimestamps, InvalidSettingsNameTheVideoKey) {
  EXPECT_NE(invalid_argument_message([] { uniform_timestamps(1.0, 0.0, 4, 16); }).find("[video] fps"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { uniform_timestamps(1.0, -2.0, 4, 16); }).find("[video] fps"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] {
              uniform_timestamps(1.0, std::numeric_limits<double>::quiet_NaN(), 4, 16);
            }).find("[video] fps"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { uniform_timestamps(1.0, 2.0, 0, 16); }).find("[video] min_frames"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { uniform_timestamps(1.0, 2.0, 5, 4); }).find("[video] max_frames"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] {
              uniform_timestamps(std::numeric_limits<double>::infinity(), 2.0, 4, 16);
            }).find("duration"),
            std::string::npos);
  // The policy checks its settings when it is made, before any clip.
  EXPECT_NE(invalid_argument_message([] { video::uniform_policy(2.0, 4, 3); }).find("[video] max_frames"),
            std::string::npos);
  expect_timestamps(video::uniform_policy(2.0, 4, 16)(3.0), uniform_timestamps(3.0, 2.0, 4, 16));
}

TEST(ClipDuration, StreamThenContainerThenFrameCount) {
  using video::DurationSource;
  const int64_t kNoPts = std::numeric_limits<int64_t>::min();  // FFmpeg's AV_NOPTS_VALUE
  // All three present: the stream's, 20480 / 10240 s.
  video::ClipDuration d = video::clip_duration({20480, 1, 10240, 2100000, 21, 10, 1});
  EXPECT_EQ(d.source, DurationSource::kStream);
  EXPECT_DOUBLE_EQ(d.seconds, 2.0);
  // No stream duration (Matroska): the container's microseconds.
  d = video::clip_duration({kNoPts, 1, 1000, 2100000, 0, 10, 1});
  EXPECT_EQ(d.source, DurationSource::kContainer);
  EXPECT_DOUBLE_EQ(d.seconds, 2.1);
  // Neither: frames / average rate, 48 frames at 24000/1001 fps.
  d = video::clip_duration({kNoPts, 1, 1000, kNoPts, 48, 24000, 1001});
  EXPECT_EQ(d.source, DurationSource::kFrameCount);
  EXPECT_DOUBLE_EQ(d.seconds, 48 * 1001 / 24000.0);
  // A stream duration without a usable time base does not count.
  d = video::clip_duration({500, 0, 0, 3000000, 0, 0, 0});
  EXPECT_EQ(d.source, DurationSource::kContainer);
  EXPECT_DOUBLE_EQ(d.seconds, 3.0);
  // Nothing: 0 s, unknown (the policy then asks for the first frame only).
  d = video::clip_duration({kNoPts, 1, 1000, kNoPts, 0, 0, 1});
  EXPECT_EQ(d.source, DurationSource::kUnknown);
  EXPECT_EQ(d.seconds, 0.0);
  EXPECT_STREQ(video::to_string(DurationSource::kFrameCount), "frame count");
}

}  // namespace
}  // namespace kforge::test
