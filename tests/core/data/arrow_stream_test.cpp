// The Arrow IPC stream reader against save_to_disk-like directories written by an independent writer
// (tests/oracles/write_arrow_dataset.py, from the Arrow specification): exactly the oracle's texts (nulls skipped,
// empty strings kept, non-ASCII, several record batches and files, utf8 and large_utf8, the pre-0.15 framing too)
// with the int64 and struct columns before it skipped; exactly its Image struct's bytes and paths, row by row (binary
// and utf8, large_binary and large_utf8, null structs, bytes and paths); a missing column or one of another kind and
// the ARROW1 file format refused, and every truncation or byte flip of a file read (for its text, and for its image
// struct's children) or refused with an sdk::Error naming the file.
#include "data/arrow_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/hf_export.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/oracle.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

struct Written {
  fs::path dir;
  nlohmann::json expected;  // {"texts", "nulls", "rows"}
};

Written oracle_dataset(const std::string& text_type, const std::string& framing = "current") {
  Written w;
  w.dir = fs::temp_directory_path() / ("kforge_arrow_" + std::to_string(::getpid()) + "_" + text_type + "_" + framing);
  fs::remove_all(w.dir);
  std::string out;
  EXPECT_EQ(run_oracle("write_arrow_dataset.py", {w.dir.string(), text_type, "1", framing}, &out), 0) << out;
  w.expected = nlohmann::json::parse(out);
  return w;
}

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void expect_oracle_texts(const std::string& text_type, const std::string& framing = "current") {
  ASSERT_TRUE(oracle_available());
  const Written w = oracle_dataset(text_type, framing);
  const std::vector<fs::path> files = data::hf_export_files(w.dir, "", "train");
  ASSERT_EQ(files, (std::vector<fs::path>{w.dir / "data-00000-of-00002.arrow", w.dir / "data-00001-of-00002.arrow"}));
  std::vector<std::string> texts;
  data::ArrowTextCount total;
  for (const fs::path& f : files) {
    const data::ArrowTextCount n =
        data::read_arrow_texts(f, "text", [&](std::string_view t) { texts.emplace_back(t); });
    total.rows += n.rows;
    total.nulls += n.nulls;
  }
  EXPECT_EQ(texts, w.expected["texts"].get<std::vector<std::string>>());
  EXPECT_EQ(total.rows, w.expected["rows"].get<int64_t>());
  EXPECT_EQ(total.nulls, w.expected["nulls"].get<int64_t>());
  fs::remove_all(w.dir);
}

TEST(ArrowStream, Utf8TextsAreTheOraclesExactly) { expect_oracle_texts("utf8"); }

TEST(ArrowStream, LargeUtf8TextsAreTheOraclesExactly) { expect_oracle_texts("large_utf8"); }

TEST(ArrowStream, ThePre015FramingWithoutContinuationMarkersGivesTheSameTexts) {
  expect_oracle_texts("utf8", "legacy");
}

// The image struct's children (binary or large_binary bytes, located; utf8 or large_utf8 paths) and the text column,
// row by row, against the oracle's: a null struct hides the values its children hold; null bytes, null paths and
// empty bytes are told apart.
void expect_oracle_rows(const std::string& text_type) {
  ASSERT_TRUE(oracle_available());
  const Written w = oracle_dataset(text_type);
  const std::vector<data::ArrowColumn> columns = {
      {"image.bytes", data::ArrowKind::binary}, {"image.path", data::ArrowKind::text}, {"text", data::ArrowKind::text}};
  std::vector<nlohmann::json> images;
  std::vector<std::string> texts;
  int64_t rows = 0;
  for (const fs::path& f : data::hf_export_files(w.dir, "", "train")) {
    const std::string bytes = file_bytes(f);
    std::ifstream in(f, std::ios::binary);
    int64_t next = 0;
    rows += data::read_arrow_rows(in, f.string(), columns, [&](int64_t row, const std::vector<data::ArrowCell>& c) {
      EXPECT_EQ(row, next++);
      ASSERT_EQ(c.size(), 3u);
      EXPECT_TRUE(c[0].bytes.empty()) << "binary values are located, not read";
      if (!c[2].null) texts.emplace_back(c[2].bytes);
      if (c[0].null && c[1].null) {
        images.push_back(nullptr);
        return;
      }
      nlohmann::json image = {{"bytes", nullptr}, {"path", nullptr}};
      if (!c[0].null) {
        ASSERT_LE(c[0].file_offset + c[0].size, bytes.size());
        std::string hex;
        for (char b : bytes.substr(c[0].file_offset, c[0].size)) hex += fmt::format("{:02x}", static_cast<uint8_t>(b));
        image["bytes"] = hex;
      }
      if (!c[1].null) {
        image["path"] = std::string(c[1].bytes);
        EXPECT_EQ(bytes.substr(c[1].file_offset, c[1].size), c[1].bytes) << "a text value's place in the file";
      }
      images.push_back(image);
    });
  }
  EXPECT_EQ(rows, w.expected["rows"].get<int64_t>());
  EXPECT_EQ(nlohmann::json(images), w.expected["images"]);
  EXPECT_EQ(texts, w.expected["texts"].get<std::vector<std::string>>());
  fs::remove_all(w.dir);
}

TEST(ArrowStream, ImageStructBinaryAndUtf8ChildrenAreTheOraclesExactly) { expect_oracle_rows("utf8"); }

TEST(ArrowStream, ImageStructLargeBinaryAndLargeUtf8ChildrenAreTheOraclesExactly) {
  expect_oracle_rows("large_utf8");
}

std::string row_refusal(const std::string& bytes, const std::vector<data::ArrowColumn>& columns) {
  std::istringstream in(bytes);
  try {
    data::read_arrow_rows(in, "the.arrow", columns, [](int64_t, const std::vector<data::ArrowCell>&) {});
  } catch (const sdk::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ArrowStream, AMissingStructChildOrAColumnOfAnotherKindIsRefusedNamingWhatIsThere) {
  ASSERT_TRUE(oracle_available());
  const Written w = oracle_dataset("utf8");
  const std::string bytes = file_bytes(w.dir / "data-00001-of-00002.arrow");
  fs::remove_all(w.dir);
  expect_has(row_refusal(bytes, {{"image.data", data::ArrowKind::binary}}),
             {"Arrow file 'the.arrow', byte ", "no column 'image.data' (the children of 'image': 'bytes', 'path')",
              "hf_dataset_image_field"});
  expect_has(row_refusal(bytes, {{"id.bytes", data::ArrowKind::binary}}),
             {"no column 'id.bytes' (its columns: 'id', 'image', 'text')"});
  expect_has(row_refusal(bytes, {{"text", data::ArrowKind::binary}}),
             {"column 'text' has Arrow type tag 5, not binary (binary or large_binary)"});
  expect_has(row_refusal(bytes, {{"image.bytes", data::ArrowKind::text}}),
             {"column 'image.bytes' has Arrow type tag 4, not a string (utf8 or large_utf8)"});
  expect_has(row_refusal(bytes, {{"image", data::ArrowKind::binary}}),
             {"column 'image' has Arrow type tag 13, not binary"});
}

std::string refusal(const std::string& bytes, const std::string& column) {
  std::istringstream in(bytes);
  try {
    data::read_arrow_texts(in, "the.arrow", column, [](std::string_view) {});
  } catch (const sdk::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ArrowStream, AMissingOrNonStringColumnIsRefusedNamingTheColumns) {
  ASSERT_TRUE(oracle_available());
  const Written w = oracle_dataset("utf8");
  const std::string bytes = file_bytes(w.dir / "data-00001-of-00002.arrow");
  expect_has(refusal(bytes, "content"),
             {"Arrow file 'the.arrow', byte ", "no column 'content' (its columns: 'id', 'image', 'text')",
              "hf_dataset_text_field"});
  expect_has(refusal(bytes, "id"), {"column 'id' has Arrow type tag 2, not a string"});
  expect_has(refusal("", "text"), {"'the.arrow'", "no schema message"});
  expect_has(refusal(std::string("ARROW1\0\0", 8) + bytes, "text"),
             {"'the.arrow', byte 0: the Arrow IPC file format (ARROW1)"});
  fs::remove_all(w.dir);
}

TEST(ArrowStream, EveryTruncationAndByteFlipIsReadOrRefusedNamingTheFile) {
  ASSERT_TRUE(oracle_available());
  const Written w = oracle_dataset("utf8");
  const std::string bytes = file_bytes(w.dir / "data-00000-of-00002.arrow");
  fs::remove_all(w.dir);
  const auto read_or_refuse = [](const std::string& damaged, const std::string& what) {
    std::istringstream in(damaged);
    try {
      data::read_arrow_texts(in, "the.arrow", "text", [](std::string_view) {});
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find("Arrow file 'the.arrow'"), std::string::npos) << what << ": " << e.what();
    }
    const std::string rows = row_refusal(damaged, {{"image.bytes", data::ArrowKind::binary},
                                                   {"image.path", data::ArrowKind::text}});
    if (!rows.empty()) EXPECT_NE(rows.find("Arrow file 'the.arrow'"), std::string::npos) << what << ": " << rows;
  };
  for (size_t n = 0; n < bytes.size(); ++n) read_or_refuse(bytes.substr(0, n), "truncated to " + std::to_string(n));
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (const unsigned char mask : {0x01, 0x80, 0xFF}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ mask);
      read_or_refuse(damaged, "byte " + std::to_string(i) + " ^ " + std::to_string(mask));
    }
  }
}

}  // namespace
}  // namespace kforge::test
