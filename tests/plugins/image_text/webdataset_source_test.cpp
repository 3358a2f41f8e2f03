// WebDataset shards: samples grouped by key in shard-name order, captions from .txt or .json, a truncated shard
// and incomplete samples warned about (naming shard and key) and counted, never a crash; JSONL manifests.
#include "image_text_io/webdataset_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data/webdataset_writer.h"
#include "image_fixtures.h"
#include "image_text_io/jsonl_manifest.h"
#include "image_text_io/sample_error.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using image_text::WebDatasetSource;

void write_shard(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::string>>& members) {
  data::TarShardWriter shard(path);
  for (const auto& [name, bytes] : members) shard.add(name, bytes);
  shard.close();
}

struct CollectedWarnings {
  std::vector<std::string> lines;
  image_text::Warn sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

TEST(WebDataset, SamplesInShardNameOrderWithTheirCaptionsAndPrompts) {
  const auto dir = temp_dir("wds_order");
  const std::string jpg = encode_jpeg(test_pattern(8, 8, 1), 90);
  const std::string png = encode_png_by_hand(4, 4, 3, test_pattern(4, 4, 2).pixels);
  const std::string webp = encode_webp_lossless(test_pattern(5, 3, 3));
  write_shard(dir / "b.tar", {{"c/k3.webp", webp}, {"c/k3.json", R"({"text": "third", "prompt": "say"})"}});
  write_shard(dir / "a.tar", {{"k1.jpg", jpg},
                              {"k1.txt", "first"},
                              {"k1.cls", "7"},
                              {"k2.meta.json", "{}"},  // key k2, extension meta.json: not a caption
                              {"k2.PNG", png},
                              {"k2.json", R"({"caption": "second", "prompt": "describe"})"}});
  CollectedWarnings warnings;
  const WebDatasetSource source(image_text::find_shards(dir), warnings.sink());
  ASSERT_EQ(source.size(), 3);
  EXPECT_TRUE(warnings.lines.empty());
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> expected = {
      {"k1", jpg, "first", ""}, {"k2", png, "second", "describe"}, {"c/k3", webp, "third", "say"}};
  for (int64_t i = 0; i < 3; ++i) {
    const image_text::RawSample s = source.load(i);
    EXPECT_EQ(s.key, std::get<0>(expected[i]));
    EXPECT_TRUE(s.image == std::get<1>(expected[i])) << s.key;
    EXPECT_EQ(s.caption, std::get<2>(expected[i]));
    EXPECT_EQ(s.prompt, std::get<3>(expected[i]));
    EXPECT_EQ(std::filesystem::path(s.origin).filename(), i < 2 ? "a.tar" : "b.tar");
  }
  EXPECT_THROW(source.load(3), sdk::Error);
}

// Python's tarfile (PAX format) writes extended headers before long or non-ASCII names: a sample is read back
// from the first of its headers.
TEST(WebDataset, ShardsWithPaxHeadersFromPythonTarfile) {
  const auto dir = temp_dir("wds_pax");
  const std::string png = encode_png_by_hand(3, 2, 3, test_pattern(3, 2, 4).pixels);
  std::ofstream(dir / "image.png", std::ios::binary) << png;
  const std::string long_key = "d/" + std::string(120, 'k');
  const std::string script = fmt::format(
      "import io, tarfile\n"
      "png = open('{0}/image.png', 'rb').read()\n"
      "with tarfile.open('{0}/pax.tar', 'w', format=tarfile.PAX_FORMAT) as t:\n"
      "  for name, data in [('{1}.png', png), ('{1}.txt', 'long'.encode()), ('caf\\u00e9.png', png),\n"
      "                     ('caf\\u00e9.txt', 'accent'.encode()), ('short.png', png), ('short.txt', b'short')]:\n"
      "    info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))\n",
      dir.string(), long_key);
  std::ofstream(dir / "make.py") << script;
  std::string output;
  ASSERT_EQ(run_command(std::string(KFORGE_PYTHON) + " '" + (dir / "make.py").string() + "'", &output), 0) << output;
  const WebDatasetSource source({dir / "pax.tar"});
  ASSERT_EQ(source.size(), 3);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {long_key, "long"}, {"caf\u00e9", "accent"}, {"short", "short"}};
  for (int64_t i = 0; i < 3; ++i) {
    const image_text::RawSample s = source.load(i);
    EXPECT_EQ(s.key, expected[i].first);
    EXPECT_EQ(s.caption, expected[i].second);
    EXPECT_TRUE(s.image == png) << s.key;
  }
}

TEST(WebDataset, TruncatedShardKeepsTheSamplesBeforeTheCutAndWarns) {
  const auto dir = temp_dir("wds_truncated");
  std::vector<std::pair<std::string, std::string>> members;
  for (int k = 0; k < 4; ++k) {
    members.emplace_back("s" + std::to_string(k) + ".jpg", encode_jpeg(test_pattern(40, 30, k), 90));
    members.emplace_back("s" + std::to_string(k) + ".txt", "caption " + std::to_string(k));
  }
  write_shard(dir / "shard.tar", members);
  // Cut in the middle of s3.jpg (member 6; each member is a 512-byte header and its data padded to 512): s0..s2
  // stay readable.
  uintmax_t cut = 0;
  for (size_t m = 0; m < 6; ++m) cut += 512 + (members[m].second.size() + 511) / 512 * 512;
  cut += 512 + members[6].second.size() / 2;
  std::filesystem::resize_file(dir / "shard.tar", cut);
  CollectedWarnings warnings;
  const WebDatasetSource source({dir / "shard.tar"}, warnings.sink());
  EXPECT_EQ(source.size(), 3);
  EXPECT_EQ(source.stats().truncated_shards, 1);
  ASSERT_EQ(warnings.lines.size(), 1u);
  EXPECT_NE(warnings.lines[0].find("shard.tar' is truncated or damaged"), std::string::npos) << warnings.lines[0];
  EXPECT_NE(warnings.lines[0].find("sample 's3'"), std::string::npos) << warnings.lines[0];
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(source.load(i).caption, "caption " + std::to_string(i));
}

TEST(WebDataset, IncompleteSamplesAreWarnedAndNotIndexed) {
  const auto dir = temp_dir("wds_incomplete");
  const std::string jpg = encode_jpeg(test_pattern(8, 8, 1), 90);
  write_shard(dir / "x.tar", {{"a.txt", "no image"}, {"b.jpg", jpg}, {"c.jpg", jpg}, {"c.txt", "ok"}});
  CollectedWarnings warnings;
  const WebDatasetSource source({dir / "x.tar"}, warnings.sink());
  ASSERT_EQ(source.size(), 1);
  EXPECT_EQ(source.key(0), "c");
  EXPECT_EQ(source.stats().incomplete_samples, 2);
  ASSERT_EQ(warnings.lines.size(), 2u);
  EXPECT_NE(warnings.lines[0].find("sample 'a' has no image"), std::string::npos) << warnings.lines[0];
  EXPECT_NE(warnings.lines[1].find("sample 'b' has no caption"), std::string::npos) << warnings.lines[1];
}

TEST(WebDataset, AFileThatIsNotATarIsAnErrorNamingIt) {
  const auto dir = temp_dir("wds_not_tar");
  std::ofstream(dir / "junk.tar") << "this is not a tar archive at all, just text that goes on for a while";
  try {
    WebDatasetSource source({dir / "junk.tar"});
    FAIL() << "indexed a text file";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("junk.tar' is not a readable tar archive"), std::string::npos) << e.what();
  }
  EXPECT_THROW(image_text::find_shards(dir / "missing"), sdk::Error);
}

TEST(JsonlManifest, LinesBecomeSamplesAndBadLinesNameFileAndLine) {
  const auto dir = temp_dir("manifest");
  std::filesystem::create_directories(dir / "img");
  const std::string png = encode_png_by_hand(2, 2, 3, test_pattern(2, 2, 0).pixels);
  std::ofstream(dir / "img" / "a.png", std::ios::binary) << png;
  std::ofstream(dir / "m.jsonl") << R"({"image": "img/a.png", "text": "a cat", "prompt": "what?"})"
                                 << "\n\n"
                                 << R"({"image": "img/missing.jpg", "text": "gone"})"
                                 << "\n";
  const image_text::JsonlManifestSource source(dir / "m.jsonl");
  ASSERT_EQ(source.size(), 2);
  const image_text::RawSample first = source.load(0);
  EXPECT_TRUE(first.image == png);
  EXPECT_EQ(first.caption, "a cat");
  EXPECT_EQ(first.prompt, "what?");
  try {
    source.load(1);
    FAIL() << "read a missing image";
  } catch (const image_text::SampleError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3: the image: cannot read '" + (dir / "img" / "missing.jpg").string() +
                                         "': No such file or directory"),
              std::string::npos)
        << e.what();
  }
  const auto message_of = [](std::string_view line) {
    try {
      image_text::parse_manifest_line(line, "m.jsonl", 5);
    } catch (const sdk::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message_of(R"({"image": "a.jpg"})"), "m.jsonl:5: \"text\" must be a string and is missing");
  EXPECT_EQ(message_of(R"({"image": 3, "text": "t"})"), "m.jsonl:5: \"image\" must be a string, not 3");
  EXPECT_NE(message_of("{not json").find("m.jsonl:5: not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace kforge::test
