// The webvid video dataset over a tiny WebVid tree (two CSV partitions, one with quoted captions, clips under the
// sharded paths): samples in the sampler's order with padded frames, masks, times and prompt-masked labels; clips that
// cannot be decoded as samples without frames or loss, warned about and counted; exact resume; max_samples; the
// validation split's flat paths; and the config errors naming the [video] keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kforge/sdk/error.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "video/video_data.h"
#include "video/webvid_source.h"
#include "video_dataset_fixtures.h"
#include "video_fixtures.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

void write_text_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

struct WebVidRow {
  std::string id;
  std::string caption;
  std::string clip;  ///< the file placed at its path ("" none), else a testsrc clip of `seconds`
  int seconds = 0;
  int64_t frames = 0;  ///< real frames expected (0: the clip cannot be decoded)
};

// The seven rows, in the dataset's order (part-0.csv, then part-1.csv).
std::vector<WebVidRow> webvid_rows() {
  const VideoClips& clips = video_clips();
  return {
      {"1000001", "A red car, driving fast", "", 1, 2},  {"1000002", "He said \"hello, world\"", "", 2, 4},
      {"2000003", "Plain caption three", "", 4, 6},      {"2000004", "A truncated clip", clips.truncated_mp4, 0, 0},
      {"2000005", "Not a video", clips.text_file, 0, 0}, {"2000006", "Nowhere to be found", "", 0, 0},
      {"2000007", "Two more seconds", "", 2, 4},
  };
}

// data_root/raw/webvid-10M/data/train/partitions/part-{0,1}.csv (part-1 written first, its columns in another
// order, a non-CSV file beside them) and the clips at their sharded paths.
fs::path make_webvid_tree() {
  const fs::path root = temp_dir("webvid");
  const fs::path partitions = root / "raw/webvid-10M/data/train/partitions";
  write_text_file(partitions / "part-1.csv",
                  "name,videoid,duration\r\n"
                  "Plain caption three,2000003,PT4S\r\n"
                  "A truncated clip,2000004,PT2S\r\n"
                  "\r\n"
                  "Not a video,2000005,PT0S\r\n"
                  "Nowhere to be found,2000006,PT0S\r\n"
                  "Two more seconds,2000007,PT2S\r\n");
  write_text_file(partitions / "part-0.csv",
                  "videoid,contentUrl,duration,page_dir,name\n"
                  "1000001,https://example.org/1.mp4,PT1S,dir,\"A red car, driving fast\"\n"
                  "1000002,https://example.org/2.mp4,PT2S,dir,\"He said \"\"hello, world\"\"\"\n");
  write_text_file(partitions / "notes.txt", "videoid,name\n9999999,not a partition\n");
  for (const WebVidRow& row : webvid_rows()) {
    const fs::path path = video::webvid_video_path(root.string(), "train", row.id);
    fs::create_directories(path.parent_path());
    if (row.seconds > 0) write_testsrc_clip(path.string(), row.seconds);
    if (!row.clip.empty()) fs::copy_file(row.clip, path);
  }
  return root;
}

const fs::path& webvid_tree() {
  static const fs::path root = make_webvid_tree();
  return root;
}

std::unique_ptr<sdk::VideoDataset> open_webvid(VideoSection& section, const sdk::ImageTextSpec& spec) {
  return video::make_webvid(section.view(), spec);
}

int64_t webvid_order(int64_t position) { return (3 * position + 2) % 7; }

TEST(WebVidDataset, ClipPathsAreShardedByIdPrefixForTrainingAndFlatForValidation) {
  EXPECT_EQ(video::webvid_video_path("/data", "train", "1066674784"),
            "/data/raw/videos/train/10/1066/106667/1066674784.mp4");
  EXPECT_EQ(video::webvid_video_path("/data", "train", "12345"), "/data/raw/videos/train/12/1234/12345/12345.mp4");
  EXPECT_EQ(video::webvid_video_path("/data", "validation", "1066674784"),
            "/data/raw/videos/validation/1066674784.mp4");
}

TEST(WebVidDataset, SamplesComeInTheSamplersOrderWithPaddedFramesAndShiftedLabels) {
  VideoSection section;
  section.set("data_root", config::Value::string(webvid_tree().string()));
  section.set("prompt", config::Value::string("Caption: "));
  ClipWarnings warnings;
  const auto data = open_webvid(section, clip_spec(&warnings, 2));
  ASSERT_EQ(data->size(), 7);
  EXPECT_NE(data->describe().find("7 clips from 2 CSV files in " + webvid_tree().string() +
                                  "/raw/webvid-10M/data/train/partitions"),
            std::string::npos)
      << data->describe();
  int64_t skipped = -1;
  const std::vector<sdk::ImageTextSample> samples = stream_all(*data, webvid_order, 0, 7, &skipped);
  ASSERT_EQ(samples.size(), 7u);
  const std::vector<WebVidRow> rows = webvid_rows();
  std::vector<std::string> failed_paths;
  for (int64_t p = 0; p < 7; ++p) {
    const sdk::ImageTextSample& s = samples[static_cast<size_t>(p)];
    const WebVidRow& row = rows[static_cast<size_t>(webvid_order(p))];
    SCOPED_TRACE("position " + std::to_string(p) + ", clip " + row.id);
    EXPECT_EQ(s.position, p);
    const std::string path = video::webvid_video_path(webvid_tree().string(), "train", row.id);
    expect_clip_text(s, "Caption: ", row.caption, row.frames > 0);
    if (row.frames > 0) {
      expect_clip_frames(s, path, row.frames);
    } else {
      expect_no_frames(s);
      failed_paths.push_back(path);
    }
  }
  // The three clips that cannot be decoded, warned about in the order they were handed out, each naming its file.
  EXPECT_EQ(skipped, 3);
  ASSERT_EQ(warnings.lines.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(warnings.lines[i].find(failed_paths[i] + ": "), std::string::npos) << warnings.lines[i];
    EXPECT_NE(warnings.lines[i].find("part-1.csv line"), std::string::npos) << warnings.lines[i];
    EXPECT_NE(warnings.lines[i].find("no frames and no loss"), std::string::npos) << warnings.lines[i];
  }
  // Positions 1, 3 and 5 hold the missing clip, the text file and the truncated MP4; each warning says why.
  EXPECT_NE(warnings.lines[0].find("No such file or directory"), std::string::npos) << warnings.lines[0];
  EXPECT_NE(warnings.lines[1].find("Invalid data found when processing input"), std::string::npos) << warnings.lines[1];
  EXPECT_NE(warnings.lines[2].find("moov atom not found"), std::string::npos) << warnings.lines[2];
}

TEST(WebVidDataset, ResumingFromAMiddlePositionGivesTheStraightStreamsSamples) {
  VideoSection section;
  section.set("data_root", config::Value::string(webvid_tree().string()));
  const auto serial = open_webvid(section, clip_spec(nullptr, 0));
  const std::vector<sdk::ImageTextSample> straight = stream_all(*serial, webvid_order, 0, 7);
  ASSERT_EQ(straight.size(), 7u);
  ClipWarnings warnings;
  const auto threaded = open_webvid(section, clip_spec(&warnings, 3));
  for (const int64_t start : {0, 3, 6}) {
    int64_t skipped = -1;
    const std::vector<sdk::ImageTextSample> tail = stream_all(*threaded, webvid_order, start, 7, &skipped);
    ASSERT_EQ(tail.size(), static_cast<size_t>(7 - start));
    for (size_t i = 0; i < tail.size(); ++i) {
      const sdk::ImageTextSample& a = tail[i];
      const sdk::ImageTextSample& b = straight[static_cast<size_t>(start) + i];
      EXPECT_EQ(a.position, b.position);
      EXPECT_TRUE(at::equal(a.pixel_values, b.pixel_values)) << "start " << start << ", sample " << i;
      EXPECT_TRUE(at::equal(a.frame_mask, b.frame_mask)) << "start " << start << ", sample " << i;
      EXPECT_TRUE(at::equal(a.frame_times, b.frame_times)) << "start " << start << ", sample " << i;
      EXPECT_TRUE(at::equal(a.input_ids, b.input_ids)) << "start " << start << ", sample " << i;
      EXPECT_TRUE(at::equal(a.labels, b.labels)) << "start " << start << ", sample " << i;
    }
    // A clip that cannot be decoded counts only when the stream serves its position.
    int64_t failed = 0;
    for (int64_t p = start; p < 7; ++p) failed += webvid_rows()[static_cast<size_t>(webvid_order(p))].frames == 0;
    EXPECT_EQ(skipped, failed) << "start " << start;
  }
}

TEST(WebVidDataset, MaxSamplesStopsReadingThePartitionsInNameOrder) {
  VideoSection section;
  section.set("data_root", config::Value::string(webvid_tree().string()));
  section.set("max_samples", config::Value::integer(3));
  const auto data = open_webvid(section, clip_spec(nullptr, 0));
  ASSERT_EQ(data->size(), 3);
  EXPECT_NE(data->describe().find("3 clips from 2 CSV files"), std::string::npos) << data->describe();
  const std::vector<sdk::ImageTextSample> samples = stream_all(
      *data, [](int64_t p) { return p; }, 0, 3);
  ASSERT_EQ(samples.size(), 3u);
  const std::vector<WebVidRow> rows = webvid_rows();
  for (size_t i = 0; i < 3; ++i) expect_clip_text(samples[i], "", rows[i].caption, true);
  section.set("max_samples", config::Value::integer(2));
  EXPECT_NE(open_webvid(section, clip_spec(nullptr, 0))->describe().find("2 clips from 1 CSV file in"),
            std::string::npos);
}

TEST(WebVidDataset, ValidationSplitReadsDataValAndFlatClipPaths) {
  const fs::path root = temp_dir("webvid_val");
  write_text_file(root / "raw/webvid-2M/data/val/partitions/val.csv", "videoid,name\nv42,A validation clip\n");
  const fs::path clip = root / "raw/videos/validation/v42.mp4";
  fs::create_directories(clip.parent_path());
  write_testsrc_clip(clip.string(), 2);
  VideoSection section;
  section.set("data_root", config::Value::string(root.string()));
  section.set("dataset_name", config::Value::string("webvid-2M"));
  section.set("split", config::Value::string("validation"));
  const auto data = open_webvid(section, clip_spec(nullptr, 1));
  ASSERT_EQ(data->size(), 1);
  const std::vector<sdk::ImageTextSample> samples = stream_all(
      *data, [](int64_t p) { return p; }, 0, 1);
  ASSERT_EQ(samples.size(), 1u);
  expect_clip_frames(samples[0], clip.string(), 4);
  expect_clip_text(samples[0], "", "A validation clip", true);
  // The training split of that tree has no partitions.
  section.set("split", config::Value::string("train"));
  const std::string error = config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); });
  EXPECT_NE(error.find("[video] data_root = \"" + root.string() + "\": no directory " + root.string() +
                       "/raw/webvid-2M/data/train/partitions"),
            std::string::npos)
      << error;
}

// Evaluation (the spec's path: [eval] dataset_path) reads the validation split of the WebVid root there, whatever
// [video] data_root and split say, and names the eval key in its errors.
TEST(WebVidDataset, InEvaluationTheValidationSplitOfTheSpecsPathIsRead) {
  const fs::path root = temp_dir("webvid_eval");
  write_text_file(root / "raw/webvid-2M/data/val/partitions/val.csv", "videoid,name\nv7,An eval clip\n");
  const fs::path clip = root / "raw/videos/validation/v7.mp4";
  fs::create_directories(clip.parent_path());
  write_testsrc_clip(clip.string(), 2);
  VideoSection section;
  section.set("data_root", config::Value::string((root / "elsewhere").string()));
  section.set("dataset_name", config::Value::string("webvid-2M"));
  section.set("split", config::Value::string("train"));
  sdk::ImageTextSpec spec = clip_spec(nullptr, 0);
  spec.path = root.string();
  spec.section = "eval";
  const auto data = open_webvid(section, spec);
  ASSERT_EQ(data->size(), 1);
  const std::vector<sdk::ImageTextSample> samples = stream_all(
      *data, [](int64_t p) { return p; }, 0, 1);
  ASSERT_EQ(samples.size(), 1u);
  expect_clip_frames(samples[0], clip.string(), 4);
  expect_clip_text(samples[0], "", "An eval clip", true);
  spec.path = (root / "none").string();
  const std::string error = config_error_of([&] { open_webvid(section, spec); });
  EXPECT_NE(error.find("[eval] dataset_path = \"" + spec.path + "\": no directory"), std::string::npos) << error;
}

TEST(WebVidDataset, MissingOrEmptyLayoutsAreConfigErrorsNamingDataRootAndThePathExpected) {
  const fs::path root = temp_dir("webvid_errors");
  VideoSection section;
  section.set("data_root", config::Value::string(root.string()));
  const auto error = [&] { return config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); }); };
  const fs::path partitions = root / "raw/webvid-10M/data/train/partitions";
  std::string message = error();
  EXPECT_NE(message.find("[video] data_root = \"" + root.string() + "\": no directory " + partitions.string()),
            std::string::npos)
      << message;
  write_text_file(partitions / "README", "no partitions here\n");
  message = error();
  EXPECT_NE(message.find("[video] data_root = \"" + root.string() + "\": no .csv file in " + partitions.string()),
            std::string::npos)
      << message;
  write_text_file(partitions / "a.csv", "videoid,name\n");
  message = error();
  EXPECT_NE(message.find("[video] data_root"), std::string::npos) << message;
  EXPECT_NE(message.find("hold no row"), std::string::npos) << message;
  section.set("data_root", config::Value::string(""));
  message = error();
  EXPECT_NE(message.find("[video] data_root is not set"), std::string::npos) << message;
}

TEST(WebVidDataset, BadPartitionsAreConfigErrorsNamingFileAndLine) {
  const fs::path root = temp_dir("webvid_bad_csv");
  const fs::path csv = root / "raw/webvid-10M/data/train/partitions/p.csv";
  VideoSection section;
  section.set("data_root", config::Value::string(root.string()));
  const auto error_with = [&](const std::string& text) {
    write_text_file(csv, text);
    return config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); });
  };
  std::string message = error_with("videoid,caption\n1,a\n");
  EXPECT_NE(message.find(csv.string() + ":1: the header has no \"name\" column"), std::string::npos) << message;
  EXPECT_NE(message.find("[video] data_root"), std::string::npos) << message;
  message = error_with("id,name\n1,a\n");
  EXPECT_NE(message.find(csv.string() + ":1: the header has no \"videoid\" column"), std::string::npos) << message;
  message = error_with("videoid,duration,name\n1,2,a\n\"2\nb\",3\n");
  EXPECT_NE(message.find(csv.string() + ":3: the row has 2 field(s)"), std::string::npos) << message;
  message = error_with("videoid,name\n1,a\n2,\"an open quote\n");
  EXPECT_NE(message.find(csv.string() + ":3: a quoted field is not closed"), std::string::npos) << message;
  message = error_with("videoid,name\n,a\n");
  EXPECT_NE(message.find(csv.string() + ":2: the row's videoid is empty"), std::string::npos) << message;
}

// A videoid names a file under raw/videos: one that would lead out of it ("../../..", "..") is refused.
TEST(WebVidDataset, AVideoidThatIsNotAnIdIsAConfigErrorNamingFileAndLine) {
  const fs::path root = temp_dir("webvid_bad_id");
  const fs::path csv = root / "raw/webvid-10M/data/train/partitions/p.csv";
  VideoSection section;
  section.set("data_root", config::Value::string(root.string()));
  for (const std::string id : {"../../../..", "..", "12/34", "..123", "12\\34"}) {
    write_text_file(csv, "videoid,name\n1000001,fine\n" + id + ",escape\n");
    const std::string message = config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); });
    EXPECT_NE(message.find(csv.string() + ":3: the row's videoid \"" + id + "\" is not an id"), std::string::npos)
        << message;
  }
}

TEST(WebVidDataset, BadKeysAreConfigErrorsNamingThem) {
  VideoSection section;
  section.set("data_root", config::Value::string(webvid_tree().string()));
  section.set("split", config::Value::string("test"));
  EXPECT_NE(config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); }).find("[video] split = \"test\""),
            std::string::npos);
  section.set("split", config::Value::string("train"));
  section.set("max_samples", config::Value::integer(-1));
  EXPECT_NE(config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); }).find("[video] max_samples = -1"),
            std::string::npos);
  section.set("max_samples", config::Value::integer(0));
  section.set("dataset_name", config::Value::string(""));
  EXPECT_NE(config_error_of([&] { open_webvid(section, clip_spec(nullptr, 0)); }).find("[video] dataset_name"),
            std::string::npos);
  section.set("dataset_name", config::Value::string("webvid-10M"));
  sdk::ImageTextSpec spec = clip_spec(nullptr, 0);
  spec.max_frames = 0;
  EXPECT_NE(config_error_of([&] { open_webvid(section, spec); }).find("[video] max_frames = 0"), std::string::npos);
  spec = clip_spec(nullptr, 0);
  spec.max_text_len = 0;
  EXPECT_NE(config_error_of([&] { open_webvid(section, spec); }).find("[vlm] max_text_len = 0"), std::string::npos);
}

}  // namespace
}  // namespace kforge::test
