// The Arrow IPC stream reader against save_to_disk-like directories written by an independent writer
// (tests/oracles/write_arrow_dataset.py, from the Arrow specification): exactly the oracle's texts (nulls skipped,
// empty strings kept, non-ASCII, several record batches and files, utf8 and large_utf8, the pre-0.15 framing too)
// with the int64 and struct columns before it skipped; a missing or non-string column and the ARROW1 file format
// refused, and every truncation or byte flip of a file read or refused with an sdk::Error naming the file.
#include "data/arrow_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

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
