// Clips that cannot be used: each is a VideoError of its kind whose message names the file, never a crash or a hang;
// and the decode deadline, on a clock the test drives (no sleeping, no timing).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "video/clip_decoder.h"
#include "video_fixtures.h"

namespace kforge::test {
namespace {

using video::ClipDecoder;
using video::DecodeOptions;
using video::VideoError;
using Kind = VideoError::Kind;

// The VideoError that opening `clip` and decoding its first and last frames throws (fails the test if none).
VideoError failure_of(const std::string& clip, const DecodeOptions& options = {}) {
  try {
    ClipDecoder decoder(clip, options);
    decoder.decode({0.0, 1e9});
  } catch (const VideoError& error) {
    return error;
  }
  ADD_FAILURE() << clip << " decoded without error";
  return VideoError(Kind::kOpen, "");
}

void expect_failure(const std::string& clip, Kind kind, const std::string& reason) {
  const VideoError error = failure_of(clip);
  const std::string message = error.what();
  EXPECT_EQ(static_cast<int>(error.kind()), static_cast<int>(kind)) << message;
  EXPECT_EQ(message.rfind(clip + ": ", 0), 0u) << "the message does not start with the file: " << message;
  EXPECT_NE(message.find(reason), std::string::npos) << "no '" << reason << "' in: " << message;
}

TEST(ClipFailure, MissingFile) { expect_failure(video_clips().missing, Kind::kOpen, "No such file or directory"); }

TEST(ClipFailure, TextFileIsNotAContainer) {
  expect_failure(video_clips().text_file, Kind::kOpen, "Invalid data found when processing input");
}

TEST(ClipFailure, AudioOnlyFileHasNoVideoStream) {
  expect_failure(video_clips().audio_wav, Kind::kNoVideoStream, "no video stream");
}

TEST(ClipFailure, VideoStreamWithoutFrames) {
  expect_failure(video_clips().empty_mp4, Kind::kNoFrames, "no frame decoded");
  expect_failure(video_clips().header_only_y4m, Kind::kNoFrames, "no frame decoded");
}

TEST(ClipFailure, TruncatedMp4LosesItsIndex) {
  // The index (moov) follows the frames: cut in half, the demuxer finds none, and says so.
  expect_failure(video_clips().truncated_mp4, Kind::kOpen, "moov atom not found");
}

TEST(ClipFailure, TruncatedFaststartMp4FailsWhereTheDataEnds) {
  // The index is intact and points past the end of the file: the first frames decode, the cut one is an error.
  expect_failure(video_clips().truncated_faststart_mp4, Kind::kDecode, "Invalid data found when processing input");
}

// A clock that advances one second per reading, from 0: the deadline is timeout_s readings after the constructor's.
struct SteppingClock {
  std::shared_ptr<int64_t> readings = std::make_shared<int64_t>(0);
  std::function<std::chrono::steady_clock::time_point()> function() const {
    return [readings = readings] { return std::chrono::steady_clock::time_point(std::chrono::seconds((*readings)++)); };
  }
};

TEST(ClipFailure, DeadlinePassedBeforeOpening) {
  DecodeOptions options;
  options.timeout_s = 0;
  const VideoError error = failure_of(video_clips().h264_mp4, options);
  EXPECT_EQ(error.kind(), Kind::kDeadline) << error.what();
  EXPECT_NE(std::string(error.what()).find(video_clips().h264_mp4 + ": decode deadline of 0 s passed"),
            std::string::npos)
      << error.what();
}

// The deadline interrupts FFmpeg's own reads (the interrupt callback), not only the decode loop between packets.
TEST(ClipFailure, DeadlineInterruptsFfmpegWhileOpening) {
  SteppingClock clock;
  DecodeOptions options;
  options.clock = clock.function();
  options.timeout_s = 2;  // reading 0: the deadline (2); 1: the check before opening; 2: FFmpeg's first check
  const VideoError error = failure_of(video_clips().h264_mp4, options);
  EXPECT_EQ(error.kind(), Kind::kDeadline) << error.what();
  EXPECT_NE(std::string(error.what()).find("passed (cannot open"), std::string::npos) << error.what();
}

TEST(ClipFailure, DeadlinePassingWhileDecodingStopsTheDecode) {
  const std::string& clip = video_clips().ffv1_mkv;
  // How many clock readings a whole decode takes (the last frame: every packet is read), and how many opening does.
  SteppingClock counting;
  DecodeOptions unlimited;
  unlimited.clock = counting.function();
  unlimited.timeout_s = std::numeric_limits<double>::infinity();
  int64_t after_open = 0;
  {
    ClipDecoder decoder(clip, unlimited);
    after_open = *counting.readings;
    decoder.decode({1e9});
  }
  const int64_t total = *counting.readings;
  ASSERT_GT(total - after_open, 20) << "fewer clock readings than packets";

  // The same decode with the deadline half-way through the decode: the constructor succeeds, decode() stops.
  SteppingClock clock;
  DecodeOptions options;
  options.clock = clock.function();
  options.timeout_s = static_cast<double>((after_open + total) / 2);
  ClipDecoder decoder(clip, options);
  try {
    decoder.decode({1e9});
    ADD_FAILURE() << "decoded past the deadline";
  } catch (const VideoError& error) {
    EXPECT_EQ(error.kind(), Kind::kDeadline) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind(clip + ": decode deadline of", 0), 0u) << error.what();
  }
  EXPECT_LT(*clock.readings, total);
}

}  // namespace
}  // namespace kforge::test
