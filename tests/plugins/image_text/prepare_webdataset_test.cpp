// kforge prepare-data --image-text: a JSONL manifest into WebDataset shards that kforge's reader and Python's
// tarfile (tests/oracles/read_webdataset.py) both read back as the manifest's images, texts and prompts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "image_fixtures.h"
#include "image_text_io/webdataset_source.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

struct Photo {
  std::string file;
  std::string bytes;
  std::string text;
  std::string prompt;
};

std::string prepare_command(const std::filesystem::path& manifest, const std::filesystem::path& out,
                            const std::string& extra) {
  return fmt::format("'{}' prepare-data --image-text --input '{}' --output '{}' {}", KFORGE_BIN, manifest.string(),
                     out.string(), extra);
}

TEST(PrepareWebDataset, ShardsReadBackByKforgeAndByPythonTarfile) {
  const auto dir = temp_dir("prepare_wds");
  std::filesystem::create_directories(dir / "photos");
  std::vector<Photo> photos;
  for (int i = 0; i < 5; ++i) {
    const auto image = test_pattern(10 + i, 8, i);
    Photo p{fmt::format("photos/p{}.{}", i,
                        i % 3 == 0   ? "jpg"
                        : i % 3 == 1 ? "png"
                                     : "webp"),
            "", fmt::format("photo number {} \"quoted\"", i), i % 2 ? "Describe:" : ""};
    p.bytes = i % 3 == 0   ? encode_jpeg(image, 85)
              : i % 3 == 1 ? encode_png_by_hand(image.width, image.height, 3, image.pixels)
                           : encode_webp_lossless(image);
    std::ofstream(dir / p.file, std::ios::binary) << p.bytes;
    photos.push_back(p);
  }
  {
    std::ofstream manifest(dir / "manifest.jsonl");
    for (const Photo& p : photos) {
      nlohmann::json line = {{"image", p.file}, {"text", p.text}};
      if (!p.prompt.empty()) line["prompt"] = p.prompt;
      manifest << line.dump() << "\n";
    }
  }
  std::string output;
  ASSERT_EQ(run_command(prepare_command(dir / "manifest.jsonl", dir / "out", "--samples-per-shard 2"), &output), 0)
      << output;
  EXPECT_NE(output.find("samples     5"), std::string::npos) << output;

  const image_text::WebDatasetSource source(image_text::find_shards(dir / "out"));
  ASSERT_EQ(source.stats().shards, 3);
  ASSERT_EQ(source.size(), 5);
  for (int64_t i = 0; i < 5; ++i) {
    const image_text::RawSample s = source.load(i);
    EXPECT_EQ(s.key, fmt::format("{:09d}", i));
    EXPECT_TRUE(s.image == photos[i].bytes) << i;
    EXPECT_EQ(s.caption, photos[i].text);
    EXPECT_EQ(s.prompt, photos[i].prompt);
  }

  std::vector<std::string> args;
  for (const auto& shard : image_text::find_shards(dir / "out")) args.push_back(shard.string());
  std::string listing;
  std::string command = std::string(KFORGE_PYTHON) + " " + KFORGE_SOURCE_DIR + "/tests/oracles/read_webdataset.py";
  for (const auto& a : args) command += " '" + a + "'";
  ASSERT_EQ(run_command(command, &listing), 0) << listing;
  const nlohmann::json members = nlohmann::json::parse(listing);
  ASSERT_EQ(members.size(), 15u);  // image, .txt and .json per sample
  for (size_t m = 0; m < members.size(); ++m) {
    const size_t i = m / 3;
    const nlohmann::json& member = members[m];
    EXPECT_EQ(member["shard"], fmt::format("shard-{:06d}.tar", i / 2));
    EXPECT_EQ(member["mtime"], 0);
    EXPECT_EQ(member["uid"], 0);
    EXPECT_EQ(member["mode"], 0644);
    const std::string extension = std::filesystem::path(photos[i].file).extension().string();
    const std::string names[3] = {fmt::format("{:09d}{}", i, extension), fmt::format("{:09d}.txt", i),
                                  fmt::format("{:09d}.json", i)};
    EXPECT_EQ(member["name"], names[m % 3]);
    if (m % 3 == 0) EXPECT_EQ(member["size"], photos[i].bytes.size());
    if (m % 3 == 1) EXPECT_EQ(member["text"], photos[i].text);
    if (m % 3 == 2) EXPECT_EQ(nlohmann::json::parse(member["text"].get<std::string>())["image"], photos[i].file);
  }
  const nlohmann::json metadata = nlohmann::json::parse(read_file(dir / "out" / "webdataset.json"));
  EXPECT_EQ(metadata["samples"], 5);
  EXPECT_EQ(metadata["shards"].size(), 3u);
  EXPECT_EQ(metadata["shards"][2]["samples"], 1);

  // The same manifest gives the same bytes.
  ASSERT_EQ(run_command(prepare_command(dir / "manifest.jsonl", dir / "again", "--samples-per-shard 2"), &output), 0);
  for (int s = 0; s < 3; ++s) {
    const std::string name = fmt::format("shard-{:06d}.tar", s);
    EXPECT_TRUE(read_file(dir / "out" / name) == read_file(dir / "again" / name)) << name;
  }
}

TEST(PrepareWebDataset, BadLinesFailNamingTheLineOrAreSkippedOnRequest) {
  const auto dir = temp_dir("prepare_wds_bad");
  std::ofstream(dir / "a.png", std::ios::binary) << encode_png_by_hand(2, 2, 3, test_pattern(2, 2, 0).pixels);
  std::ofstream(dir / "m.jsonl") << R"({"image": "a.png", "text": "fine"})"
                                 << "\n"
                                 << R"({"image": "missing.png", "text": "gone"})"
                                 << "\n"
                                 << R"({"image": "a.gif", "text": "gif"})"
                                 << "\n";
  std::string output;
  EXPECT_EQ(run_command(prepare_command(dir / "m.jsonl", dir / "out", ""), &output), 1) << output;
  EXPECT_NE(output.find("m.jsonl:2: cannot read the image"), std::string::npos) << output;
  ASSERT_EQ(run_command(prepare_command(dir / "m.jsonl", dir / "out", "--skip-bad-lines --overwrite"), &output), 0)
      << output;
  EXPECT_NE(output.find("m.jsonl:3: the image 'a.gif' is not a .jpg, .jpeg, .png or .webp file"), std::string::npos)
      << output;
  EXPECT_NE(output.find("samples     1"), std::string::npos) << output;
  EXPECT_EQ(run_command(prepare_command(dir / "m.jsonl", dir / "out2", "--tokenizer x.model"), &output), 2) << output;
  EXPECT_NE(output.find("--tokenizer does not apply with --image-text"), std::string::npos) << output;
}

}  // namespace
}  // namespace kforge::test
