// ImageTextData, the image_text_dataset component: a JSONL manifest or a directory of WebDataset shards chosen by
// [data] dataset_path and file_pattern, samples served in the sampler's order as sdk samples (normalised pixels,
// shifted prompt-masked labels), a corrupt image skipped with a named warning and counted, one image file read as a
// sample's pixels (no dataset_path), the config errors, and the files it reads: relative manifest paths under the
// manifest's directory, regular files only, up to max_image_bytes.
#include "image_text/image_text_data.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "data/webdataset_writer.h"
#include "image_fixtures.h"
#include "image_text_io/image_decode.h"
#include "image_text_io/image_transform.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using image_text::ImageTextData;

constexpr int64_t kImageSize = 6;
constexpr int64_t kMaxTextLen = 16;
constexpr int64_t kPadId = 0;
constexpr int64_t kEosId = 1;

struct DatasetWarnings {
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

// CLIP's normalisation (not the SigLIP default), so the pixels show the spec's mean and std were used.
sdk::ImageTextSpec small_spec(const std::filesystem::path& path, const std::string& file_pattern,
                              DatasetWarnings* warnings, int num_workers) {
  sdk::ImageTextSpec spec;
  spec.path = path.string();
  spec.file_pattern = file_pattern;
  spec.image_size = kImageSize;
  const image_text::Normalization clip = image_text::clip_normalization();
  spec.pixels.mean = clip.mean;
  spec.pixels.std = clip.std;
  spec.max_text_len = kMaxTextLen;
  spec.pad_id = kPadId;
  spec.eos_id = kEosId;
  spec.tokenize = byte_tokenizer();
  spec.num_workers = num_workers;
  spec.queue_depth = 3;
  if (warnings) spec.warn = warnings->sink();
  return spec;
}

void write_dataset_shard(const std::filesystem::path& path,
                         const std::vector<std::pair<std::string, std::string>>& members) {
  data::TarShardWriter shard(path);
  for (const auto& [name, bytes] : members) shard.add(name, bytes);
  shard.close();
}

std::vector<int64_t> ids_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// Byte tokens of prompt, caption and EOS: input_ids are all but the last token, then padding; labels the next
// token where it is a caption token or EOS, -100 where it is a prompt token and on padding.
void expect_text(const sdk::ImageTextSample& s, const std::string& prompt, const std::string& caption) {
  std::vector<int64_t> tokens(prompt.begin(), prompt.end());
  tokens.insert(tokens.end(), caption.begin(), caption.end());
  tokens.push_back(kEosId);
  ASSERT_LE(tokens.size(), static_cast<size_t>(kMaxTextLen));
  std::vector<int64_t> ids(kMaxTextLen, kPadId);
  std::copy(tokens.begin(), tokens.end(), ids.begin());
  EXPECT_EQ(ids_of(s.input_ids), ids) << caption;
  const std::vector<int64_t> labels = ids_of(s.labels);
  ASSERT_EQ(labels.size(), static_cast<size_t>(kMaxTextLen));
  const size_t first_target = prompt.empty() ? 0 : prompt.size() - 1;  // predicts the first caption token
  const size_t last_target = tokens.size() - 2;                        // predicts EOS
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i >= first_target && i <= last_target) {
      EXPECT_EQ(labels[i], ids[i + 1]) << caption << ": label " << i;
    } else {
      EXPECT_EQ(labels[i], -100) << caption << ": label " << i;
    }
  }
}

void expect_shapes(const sdk::ImageTextSample& s) {
  EXPECT_EQ(s.pixel_values.sizes(), (at::IntArrayRef{3, kImageSize, kImageSize}));
  EXPECT_EQ(s.pixel_values.scalar_type(), at::kFloat);
  EXPECT_EQ(s.input_ids.sizes(), (at::IntArrayRef{kMaxTextLen}));
  EXPECT_EQ(s.input_ids.scalar_type(), at::kLong);
  EXPECT_EQ(s.labels.sizes(), (at::IntArrayRef{kMaxTextLen}));
  EXPECT_EQ(s.labels.scalar_type(), at::kLong);
}

at::Tensor expected_pixels(const std::string& encoded) {
  return image_text::to_pixel_values(image_text::decode_image(encoded, "expected"), kImageSize, kImageSize,
                                     image_text::clip_normalization());
}

std::string config_error_of(const sdk::ImageTextSpec& spec) {
  try {
    ImageTextData data(spec);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

struct ManifestEntry {
  std::string file;
  std::string image;
  std::string caption;
  std::string prompt;
};

TEST(ImageTextData, JsonlManifestSamplesComeInTheSamplersOrderWithShiftedLabels) {
  const auto dir = temp_dir("itd_manifest");
  std::filesystem::create_directories(dir / "img");
  const std::vector<ManifestEntry> entries = {
      {"img/a.png", encode_png_by_hand(9, 7, 3, test_pattern(9, 7, 1).pixels), "a cat", "what?"},
      {"img/b.jpg", encode_jpeg(test_pattern(12, 10, 2), 90), "two dogs", ""},
      {"img/c.png", encode_png_by_hand(4, 5, 3, test_pattern(4, 5, 3).pixels), "a bird", "hm"},
      {"img/d.jpg", encode_jpeg(test_pattern(8, 8, 4), 85), "sky", ""},
  };
  {
    std::ofstream manifest(dir / "m.jsonl");
    for (const ManifestEntry& e : entries) {
      std::ofstream(dir / e.file, std::ios::binary) << e.image;
      manifest << R"({"image": ")" << e.file << R"(", "text": ")" << e.caption << '"';
      if (!e.prompt.empty()) manifest << R"(, "prompt": ")" << e.prompt << '"';
      manifest << "}\n";
    }
  }
  DatasetWarnings warnings;
  // The manifest takes precedence over file_pattern, which only selects shards in a directory.
  const ImageTextData data(small_spec(dir / "m.jsonl", "*.npy", &warnings, 2));
  EXPECT_EQ(data.size(), 4);
  EXPECT_EQ(data.describe(), "JSONL manifest " + (dir / "m.jsonl").string() + ": 4 samples");

  // Positions 1..3 of the order 3, 1, 0, 2.
  const std::vector<int64_t> order = {3, 1, 0, 2};
  auto stream = data.stream([&order](int64_t p) { return order.at(p); }, 1, 4);
  for (int64_t p = 1; p < 4; ++p) {
    std::optional<sdk::ImageTextSample> s = stream->next();
    ASSERT_TRUE(s.has_value()) << "position " << p;
    EXPECT_EQ(s->position, p);
    expect_shapes(*s);
    const ManifestEntry& e = entries[order[p]];
    EXPECT_TRUE(at::allclose(s->pixel_values, expected_pixels(e.image))) << e.file;
    expect_text(*s, e.prompt, e.caption);
  }
  EXPECT_FALSE(stream->next().has_value());
  EXPECT_EQ(stream->skipped(), 0);
  EXPECT_TRUE(warnings.lines.empty());
}

TEST(ImageTextData, WithoutAPathItHasNoSamplesAndReadsOneImageAsASamplesPixels) {
  const auto dir = temp_dir("itd_pixels");
  const std::string jpg = encode_jpeg(test_pattern(12, 10, 2), 90);
  std::ofstream(dir / "photo.jpg", std::ios::binary) << jpg;
  std::ofstream(dir / "bad.jpg", std::ios::binary) << "not an image";
  const ImageTextData data(small_spec("", "", nullptr, 0));
  EXPECT_EQ(data.size(), 0);
  const at::Tensor pixels = data.pixel_values((dir / "photo.jpg").string());
  EXPECT_EQ(pixels.sizes(), (at::IntArrayRef{3, kImageSize, kImageSize}));
  EXPECT_TRUE(at::equal(pixels, expected_pixels(jpg)));
  for (const std::string& file : {(dir / "bad.jpg").string(), (dir / "missing.png").string()}) {
    try {
      data.pixel_values(file);
      ADD_FAILURE() << "expected an error for " << file;
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(data.stream([](int64_t p) { return p; }, 0, 1), sdk::Error);
}

TEST(ImageTextData, WebDatasetDirectoryReadsTheMatchingShardsInNameOrder) {
  const auto dir = temp_dir("itd_wds");
  const std::string jpg = encode_jpeg(test_pattern(10, 8, 5), 90);
  const std::string png = encode_png_by_hand(6, 6, 3, test_pattern(6, 6, 6).pixels);
  write_dataset_shard(dir / "b.tar", {{"k3.png", png}, {"k3.json", R"({"text": "third", "prompt": "say"})"}});
  write_dataset_shard(
      dir / "a.tar",
      {{"k1.jpg", jpg}, {"k1.txt", "first"}, {"k2.png", png}, {"k2.txt", "second"}, {"lonely.txt", "no image"}});
  write_dataset_shard(dir / "c.tar.bak", {{"k9.png", png}, {"k9.txt", "not selected"}});
  std::ofstream(dir / "README") << "not a shard";
  DatasetWarnings warnings;
  const ImageTextData data(small_spec(dir, "*.tar", &warnings, 0));
  EXPECT_EQ(data.size(), 3);
  EXPECT_EQ(data.describe(), "WebDataset: 2 shards in " + dir.string() + ", 3 samples (1 incomplete skipped)");
  ASSERT_EQ(warnings.lines.size(), 1u);
  EXPECT_NE(warnings.lines[0].find("'lonely'"), std::string::npos) << warnings.lines[0];

  auto stream = data.stream([](int64_t p) { return p; }, 0, 3);
  const std::vector<std::tuple<std::string, std::string, std::string>> expected = {
      {jpg, "first", ""}, {png, "second", ""}, {png, "third", "say"}};
  for (int64_t p = 0; p < 3; ++p) {
    std::optional<sdk::ImageTextSample> s = stream->next();
    ASSERT_TRUE(s.has_value()) << "position " << p;
    EXPECT_EQ(s->position, p);
    expect_shapes(*s);
    EXPECT_TRUE(at::allclose(s->pixel_values, expected_pixels(std::get<0>(expected[p])))) << "position " << p;
    expect_text(*s, std::get<2>(expected[p]), std::get<1>(expected[p]));
  }
  EXPECT_FALSE(stream->next().has_value());
}

TEST(ImageTextData, CorruptImageIsSkippedWithAWarningNamingItsKeyAndCounted) {
  const auto dir = temp_dir("itd_corrupt");
  const std::string png = encode_png_by_hand(5, 5, 3, test_pattern(5, 5, 7).pixels);
  write_dataset_shard(dir / "shard.tar", {{"good0.png", png},
                                          {"good0.txt", "zero"},
                                          {"broken.jpg", "\xff\xd8\xff this is not a JPEG"},
                                          {"broken.txt", "one"},
                                          {"good2.png", png},
                                          {"good2.txt", "two"}});
  for (const int workers : {0, 2}) {
    DatasetWarnings warnings;
    const ImageTextData data(small_spec(dir, "*.tar", &warnings, workers));
    ASSERT_EQ(data.size(), 3);
    auto stream = data.stream([](int64_t p) { return p; }, 0, 3);
    std::vector<int64_t> positions;
    while (std::optional<sdk::ImageTextSample> s = stream->next()) {
      positions.push_back(s->position);
      expect_text(*s, "", s->position == 0 ? "zero" : "two");
    }
    EXPECT_EQ(positions, (std::vector<int64_t>{0, 2})) << workers << " workers";
    EXPECT_EQ(stream->skipped(), 1) << workers << " workers";
    ASSERT_EQ(warnings.lines.size(), 1u) << workers << " workers";
    EXPECT_NE(warnings.lines[0].find("sample 'broken'"), std::string::npos) << warnings.lines[0];
    EXPECT_NE(warnings.lines[0].find("skipped"), std::string::npos) << warnings.lines[0];
  }
}

TEST(ImageTextData, MissingPathOtherFileAndUnmatchedDirectoryAreConfigErrorsNamingDatasetPathOfItsSection) {
  const auto dir = temp_dir("itd_paths");
  const std::string expected = "expected a directory of WebDataset .tar shards, or a .jsonl manifest";

  const auto missing = dir / "nowhere";
  std::string message = config_error_of(small_spec(missing, "*.tar", nullptr, 0));
  EXPECT_NE(message.find("[data] dataset_path = \"" + missing.string() + "\" does not exist"), std::string::npos)
      << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;

  std::ofstream(dir / "data.json") << "{}";
  message = config_error_of(small_spec(dir / "data.json", "*.tar", nullptr, 0));
  EXPECT_NE(message.find("[data] dataset_path = \"" + (dir / "data.json").string() +
                         "\" is neither a directory nor "
                         "a .jsonl file"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;

  // data.json matches nothing either way, and there is no .tar to suggest.
  message = config_error_of(small_spec(dir, "*.tar", nullptr, 0));
  EXPECT_NE(message.find("[data] dataset_path = \"" + dir.string() +
                         "\": no file matches [data] file_pattern = "
                         "\"*.tar\""),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;

  // The evaluation data's path and pattern are [eval]'s, and its errors say so.
  sdk::ImageTextSpec eval = small_spec(dir, "*.tar", nullptr, 0);
  eval.section = "eval";
  message = config_error_of(eval);
  EXPECT_NE(message.find("[eval] dataset_path = \"" + dir.string() + "\": no file matches [eval] file_pattern = "),
            std::string::npos)
      << message;
  eval.path = missing.string();
  message = config_error_of(eval);
  EXPECT_NE(message.find("[eval] dataset_path = \"" + missing.string() + "\" does not exist"), std::string::npos)
      << message;

  sdk::ImageTextSpec no_size = small_spec(dir, "*.tar", nullptr, 0);
  no_size.image_size = 0;
  message = config_error_of(no_size);
  EXPECT_NE(message.find("image size 0 must be > 0"), std::string::npos) << message;
}

TEST(ImageTextData, TokenShardPatternOverTarShardsSaysToSetFilePattern) {
  const auto dir = temp_dir("itd_pattern");
  const std::string png = encode_png_by_hand(3, 3, 3, test_pattern(3, 3, 8).pixels);
  write_dataset_shard(dir / "s0.tar", {{"k.png", png}, {"k.txt", "x"}});
  write_dataset_shard(dir / "s1.tar", {{"k.png", png}, {"k.txt", "y"}});
  const std::string message = config_error_of(small_spec(dir, "*.npy", nullptr, 0));
  EXPECT_NE(message.find("[data] dataset_path = \"" + dir.string() +
                         "\": no file matches [data] file_pattern = "
                         "\"*.npy\", but the directory holds 2 .tar files"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("set [data] file_pattern = \"*.tar\""), std::string::npos) << message;
}

TEST(ImageTextData, DatasetWithoutSamplesIsAConfigError) {
  const auto dir = temp_dir("itd_empty");
  std::ofstream(dir / "empty.jsonl") << "\n\n";
  const std::string manifest = (dir / "empty.jsonl").string();
  std::string message = config_error_of(small_spec(dir / "empty.jsonl", "*.npy", nullptr, 0));
  EXPECT_NE(message.find("[data] dataset_path = \"" + manifest + "\": the image-text manifest '" + manifest +
                         "' holds no sample"),
            std::string::npos)
      << message;

  std::filesystem::create_directories(dir / "shards");
  write_dataset_shard(dir / "shards" / "only_captions.tar", {{"k.txt", "no image"}});
  DatasetWarnings warnings;
  message = config_error_of(small_spec(dir / "shards", "*.tar", &warnings, 0));
  EXPECT_NE(
      message.find("[data] dataset_path = \"" + (dir / "shards").string() + "\" holds no usable sample " +
                   "(WebDataset: 1 shard in " + (dir / "shards").string() + ", 0 samples (1 incomplete skipped))"),
      std::string::npos)
      << message;
}

TEST(ImageTextData, BadManifestLineIsAConfigErrorNamingDatasetPathAndLine) {
  const auto dir = temp_dir("itd_bad_line");
  std::ofstream(dir / "m.jsonl") << R"({"image": "a.png", "text": "ok"})"
                                 << "\n"
                                 << R"({"image": "b.png"})"
                                 << "\n";
  const std::string manifest = (dir / "m.jsonl").string();
  const std::string message = config_error_of(small_spec(dir / "m.jsonl", "*.npy", nullptr, 0));
  EXPECT_NE(message.find("[data] dataset_path = \"" + manifest + "\": " + manifest +
                         ":2: \"text\" must be a string and is missing"),
            std::string::npos)
      << message;
}

TEST(ImageTextData, AManifestPathOutOfItsDirectoryIsAConfigErrorNamingTheLine) {
  const auto dir = temp_dir("itd_escape");
  std::ofstream(dir / "m.jsonl") << R"({"image": "a.png", "text": "ok"})" << "\n"
                                 << R"({"image": "../../../../etc/passwd", "text": "x"})" << "\n";
  const std::string message = config_error_of(small_spec(dir / "m.jsonl", "*.npy", nullptr, 0));
  EXPECT_NE(message.find((dir / "m.jsonl").string() + ":2: the relative path \"../../../../etc/passwd\" leaves the "
                         "manifest's directory"),
            std::string::npos)
      << message;
}

// An absolute path is kept (LLaVA-style manifests), but only a regular file is read and none of its bytes is shown:
// /dev/zero is refused unread, a text file is "not an image" by its size alone, an image over the cap is refused.
TEST(ImageTextData, OnlyRegularFilesUpToTheCapAreReadAndNoMessageShowsTheirBytes) {
  const auto dir = temp_dir("itd_confined");
  const std::string png = encode_png_by_hand(5, 5, 3, test_pattern(5, 5, 7).pixels);
  std::ofstream(dir / "good.png", std::ios::binary) << png;
  std::ofstream(dir / "secret.txt") << "password=hunter2\n";
  std::ofstream(dir / "m.jsonl") << R"({"image": "/dev/zero", "text": "zero"})" << "\n"
                                 << R"({"image": ")" << (dir / "secret.txt").string() << R"(", "text": "s"})" << "\n"
                                 << R"({"image": "good.png", "text": "good"})" << "\n";
  DatasetWarnings warnings;
  const ImageTextData data(small_spec(dir / "m.jsonl", "", &warnings, 0), static_cast<int64_t>(png.size()));
  auto stream = data.stream([](int64_t p) { return p; }, 0, 3);
  std::vector<int64_t> positions;
  while (std::optional<sdk::ImageTextSample> s = stream->next()) positions.push_back(s->position);
  EXPECT_EQ(positions, (std::vector<int64_t>{2}));
  ASSERT_EQ(warnings.lines.size(), 2u);
  EXPECT_NE(warnings.lines[0].find("line 1: the image: '/dev/zero' is a device, not a regular file"), std::string::npos)
      << warnings.lines[0];
  EXPECT_NE(warnings.lines[1].find("17 bytes that are not a JPEG, PNG or WebP image"), std::string::npos)
      << warnings.lines[1];
  for (const std::string& line : warnings.lines) EXPECT_EQ(line.find("hunter2"), std::string::npos) << line;

  DatasetWarnings capped;
  const ImageTextData small(small_spec(dir / "m.jsonl", "", &capped, 0), static_cast<int64_t>(png.size()) - 1);
  auto none = small.stream([](int64_t p) { return p; }, 2, 3);
  EXPECT_FALSE(none->next().has_value());
  ASSERT_EQ(capped.lines.size(), 1u);
  EXPECT_NE(capped.lines[0].find(fmt::format("has {} bytes, more than [vlm] max_image_bytes = {}", png.size(),
                                             png.size() - 1)),
            std::string::npos)
      << capped.lines[0];
}

TEST(ImageTextData, AWebDatasetMemberOverTheCapIsSkipped) {
  const auto dir = temp_dir("itd_member_cap");
  const std::string png = encode_png_by_hand(5, 5, 3, test_pattern(5, 5, 7).pixels);
  write_dataset_shard(dir / "shard.tar",
                      {{"big.png", png + std::string(64, '\0')}, {"big.txt", "big"}, {"ok.png", png}, {"ok.txt", "ok"}});
  DatasetWarnings warnings;
  const ImageTextData data(small_spec(dir, "*.tar", &warnings, 0), static_cast<int64_t>(png.size()));
  auto stream = data.stream([](int64_t p) { return p; }, 0, 2);
  EXPECT_EQ(stream->next()->position, 1);
  ASSERT_EQ(warnings.lines.size(), 1u);
  EXPECT_NE(warnings.lines[0].find(fmt::format("sample 'big': member 'big.png' has {} bytes, more than [vlm] "
                                               "max_image_bytes = {}",
                                               png.size() + 64, png.size())),
            std::string::npos)
      << warnings.lines[0];
}

}  // namespace
}  // namespace kforge::test
