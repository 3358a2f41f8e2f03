// The video_jsonl video dataset: a JSON Lines manifest at [video] data_root whose clips are relative to its directory
// or absolute, each line's own prompt over [video] prompt, max_samples, the errors naming the manifest's line or
// [video] data_root, the files it reads (under the manifest's directory, regular, up to [video] max_clip_bytes), and
// the stop when every clip fails.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "image_text_io/failure_log.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"
#include "video/video_data.h"
#include "video_dataset_fixtures.h"
#include "video_fixtures.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

void write_manifest(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::unique_ptr<sdk::VideoDataset> open_manifest(const fs::path& manifest, const std::string& prompt,
                                                 int64_t max_samples, ClipWarnings* warnings, int num_workers) {
  VideoSection section;
  section.set("dataset_type", config::Value::string("video_jsonl"));
  section.set("data_root", config::Value::string(manifest.string()));
  section.set("prompt", config::Value::string(prompt));
  section.set("max_samples", config::Value::integer(max_samples));
  return video::make_video_jsonl(section.view(), clip_spec(warnings, num_workers));
}

TEST(VideoJsonlDataset, ClipsRelativeToTheManifestOrAbsoluteWithTheirOwnPromptOrTheSections) {
  const fs::path dir = temp_dir("video_jsonl");
  fs::create_directories(dir / "clips");
  write_testsrc_clip((dir / "clips/one.mp4").string(), 1);
  const fs::path elsewhere = temp_dir("video_jsonl_abs") / "four.mp4";
  write_testsrc_clip(elsewhere.string(), 4);
  const fs::path manifest = dir / "clips.jsonl";
  write_manifest(manifest,
                 "{\"video\": \"clips/one.mp4\", \"text\": \"one second\"}\n"
                 "\n"
                 "{\"video\": \"" +
                     elsewhere.string() +
                     "\", \"text\": \"four seconds\", \"prompt\": \"Q: what happens? A: \"}\n"
                     "{\"video\": \"clips/none.mp4\", \"text\": \"gone\", \"prompt\": \"\"}\n");
  ClipWarnings warnings;
  const auto data = open_manifest(manifest, "Describe: ", 0, &warnings, 2);
  ASSERT_EQ(data->size(), 3);
  EXPECT_EQ(data->describe(), "video JSONL manifest " + manifest.string() + ": 3 clips");
  int64_t skipped = -1;
  const std::vector<sdk::ImageTextSample> samples = stream_all(
      *data, [](int64_t p) { return 2 - p; }, 0, 3, &skipped);
  ASSERT_EQ(samples.size(), 3u);
  expect_no_frames(samples[0]);
  expect_clip_text(samples[0], "", "gone", false);
  expect_clip_frames(samples[1], elsewhere.string(), 6);
  expect_clip_text(samples[1], "Q: what happens? A: ", "four seconds", true);
  expect_clip_frames(samples[2], (dir / "clips/one.mp4").string(), 2);
  expect_clip_text(samples[2], "Describe: ", "one second", true);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(warnings.lines.size(), 1u);
  EXPECT_NE(warnings.lines[0].find(manifest.string() + " line 4: " + (dir / "clips/none.mp4").string() + ": "),
            std::string::npos)
      << warnings.lines[0];

  const auto capped = open_manifest(manifest, "", 2, nullptr, 0);
  EXPECT_EQ(capped->size(), 2);
}

TEST(VideoJsonlDataset, BadLinesAreConfigErrorsNamingFileAndLine) {
  const fs::path manifest = temp_dir("video_jsonl_bad") / "m.jsonl";
  const auto error_with = [&](const std::string& text) {
    write_manifest(manifest, text);
    return config_error_of([&] { open_manifest(manifest, "", 0, nullptr, 0); });
  };
  const std::string good = "{\"video\": \"a.mp4\", \"text\": \"a\"}\n";
  std::string message = error_with(good + "{\"text\": \"no video\"}\n");
  EXPECT_NE(message.find("[video] data_root = \"" + manifest.string() + "\": " + manifest.string() +
                         ":2: \"video\" must be a string and is missing"),
            std::string::npos)
      << message;
  message = error_with(good + "\n{\"video\": \"b.mp4\", \"text\": 7}\n");
  EXPECT_NE(message.find(manifest.string() + ":3: \"text\" must be a string, not 7"), std::string::npos) << message;
  message = error_with("[\"a.mp4\", \"a\"]\n");
  EXPECT_NE(message.find(manifest.string() + ":1: not a JSON object"), std::string::npos) << message;
  message = error_with("{\"video\": \"\", \"text\": \"a\"}\n");
  EXPECT_NE(message.find(manifest.string() + ":1: \"video\" is an empty path"), std::string::npos) << message;
  message = error_with("\n\n");
  EXPECT_NE(message.find("the manifest holds no clip"), std::string::npos) << message;
}

TEST(VideoJsonlDataset, DataRootThatIsNotAManifestIsAConfigErrorNamingIt) {
  const fs::path dir = temp_dir("video_jsonl_root");
  for (const fs::path& root : {dir, dir / "missing.jsonl", dir / "clips.json"}) {
    if (root.extension() == ".json") write_manifest(root, "{\"video\": \"a.mp4\", \"text\": \"a\"}\n");
    const std::string message = config_error_of([&] { open_manifest(root, "", 0, nullptr, 0); });
    EXPECT_NE(message.find("[video] data_root = \"" + root.string() + "\": expected a JSON Lines manifest"),
              std::string::npos)
        << message;
  }
  const std::string message = config_error_of([&] { open_manifest(dir / "m.jsonl", "", -2, nullptr, 0); });
  EXPECT_NE(message.find("[video] max_samples = -2"), std::string::npos) << message;
}

// Evaluation (the spec's path: [eval] dataset_path) reads the manifest there, not [video] data_root's, and names the
// eval key in its errors.
TEST(VideoJsonlDataset, InEvaluationTheManifestIsTheSpecsPath) {
  const fs::path dir = temp_dir("video_jsonl_eval");
  write_testsrc_clip((dir / "e.mp4").string(), 2);
  write_manifest(dir / "eval.jsonl", "{\"video\": \"e.mp4\", \"text\": \"an eval clip\"}\n");
  VideoSection section;
  section.set("data_root", config::Value::string((dir / "training.jsonl").string()));  // absent: not read
  sdk::ImageTextSpec spec = clip_spec(nullptr, 0);
  spec.path = (dir / "eval.jsonl").string();
  spec.section = "eval";
  const auto data = video::make_video_jsonl(section.view(), spec);
  ASSERT_EQ(data->size(), 1);
  const std::vector<sdk::ImageTextSample> samples = stream_all(
      *data, [](int64_t p) { return p; }, 0, 1);
  ASSERT_EQ(samples.size(), 1u);
  expect_clip_text(samples[0], "", "an eval clip", true);
  spec.path = (dir / "missing.jsonl").string();
  const std::string message = config_error_of([&] { video::make_video_jsonl(section.view(), spec); });
  EXPECT_NE(message.find("[eval] dataset_path = \"" + spec.path + "\""), std::string::npos) << message;
}

TEST(VideoJsonlDataset, ARelativePathOutOfTheManifestsDirectoryIsAConfigErrorNamingTheLine) {
  const fs::path manifest = temp_dir("video_jsonl_escape") / "m.jsonl";
  write_manifest(manifest, "{\"video\": \"a.mp4\", \"text\": \"a\"}\n{\"video\": \"../../x.mp4\", \"text\": \"b\"}\n");
  const std::string message = config_error_of([&] { open_manifest(manifest, "", 0, nullptr, 0); });
  EXPECT_NE(message.find(manifest.string() + ":2: the relative path \"../../x.mp4\" leaves the manifest's directory"),
            std::string::npos)
      << message;
}

// Only regular files up to [video] max_clip_bytes are handed to the decoder: a device and a clip over the cap are
// failed clips (no frames, no loss), each warning naming the file and why.
TEST(VideoJsonlDataset, ADeviceOrAClipOverMaxClipBytesIsAFailedClip) {
  const fs::path dir = temp_dir("video_jsonl_confined");
  write_testsrc_clip((dir / "one.mp4").string(), 1);
  const auto size = static_cast<int64_t>(fs::file_size(dir / "one.mp4"));
  write_manifest(dir / "m.jsonl", "{\"video\": \"/dev/zero\", \"text\": \"zero\"}\n"
                                  "{\"video\": \"one.mp4\", \"text\": \"one\"}\n");
  for (const int64_t cap : {size, size - 1}) {
    VideoSection section;
    section.set("data_root", config::Value::string((dir / "m.jsonl").string()));
    section.set("max_clip_bytes", config::Value::integer(cap));
    ClipWarnings warnings;
    const auto data = video::make_video_jsonl(section.view(), clip_spec(&warnings, 1));
    int64_t skipped = -1;
    const std::vector<sdk::ImageTextSample> samples = stream_all(
        *data, [](int64_t p) { return p; }, 0, 2, &skipped);
    ASSERT_EQ(samples.size(), 2u);
    expect_no_frames(samples[0]);
    EXPECT_NE(warnings.lines.at(0).find("'/dev/zero' is a device, not a regular file"), std::string::npos)
        << warnings.lines[0];
    if (cap == size) {
      expect_clip_frames(samples[1], (dir / "one.mp4").string(), 2);
      EXPECT_EQ(skipped, 1);
    } else {
      expect_no_frames(samples[1]);
      EXPECT_EQ(skipped, 2);
      EXPECT_NE(warnings.lines.at(1).find(fmt::format("has {} bytes, more than [video] max_clip_bytes = {}", size, cap)),
                std::string::npos)
          << warnings.lines[1];
    }
  }
}

// Every clip fails (the video dataset): the stream stops with a ConfigError naming the dataset after
// kMaxConsecutiveFailures clips in a row, having warned kFailuresShown times, instead of handing out frame-less samples
// for ever.
TEST(VideoJsonlDataset, ClipsThatAllFailStopTheStreamWithAConfigErrorAfterAFewWarnings) {
  const fs::path dir = temp_dir("video_jsonl_all_fail");
  write_manifest(dir / "m.jsonl", "{\"video\": \"none-a.mp4\", \"text\": \"a\"}\n"
                                  "{\"video\": \"none-b.mp4\", \"text\": \"b\"}\n");
  for (const int workers : {0, 2}) {
    ClipWarnings warnings;
    const auto data = open_manifest(dir / "m.jsonl", "", 0, &warnings, workers);
    auto stream = data->stream([](int64_t p) { return p % 2; }, 0, 100 * image_text::kMaxConsecutiveFailures);
    int64_t handed_out = 0;
    const std::string message = config_error_of([&] {
      while (stream->next()) ++handed_out;
    });
    EXPECT_NE(message.find("video JSONL manifest " + (dir / "m.jsonl").string() +
                           ": 2 clips: 100 samples in a row could not be used"),
              std::string::npos)
        << message;
    EXPECT_EQ(handed_out, image_text::kMaxConsecutiveFailures - 1) << workers << " workers";
    EXPECT_EQ(warnings.lines.size(), static_cast<size_t>(image_text::kFailuresShown)) << workers << " workers";
  }
}

}  // namespace
}  // namespace kforge::test
