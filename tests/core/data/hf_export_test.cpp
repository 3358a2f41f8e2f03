// Local Hugging Face exports: which files hold a split (a file, SPLIT.jsonl, SPLIT-*-of-*.jsonl[.gz], data/,
// SPLIT/, a config's subdirectory, a save_to_disk Dataset or DatasetDict's Arrow files), the refusals (a hub id,
// Parquet, a saved dataset of another split or listing a missing file, no file of the split, no such config), and
// the token cache's key, which changes with every input it names and with nothing else.
#include "data/hf_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "kforge/sdk/error.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

class HfExportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge_hf_export_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path touch(const fs::path& rel, const std::string& text = "{\"text\": \"a\"}\n") {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
    return root_ / rel;
  }
  std::string refusal(const fs::path& path, const std::string& config, const std::string& split) {
    try {
      data::hf_export_files(path, config, split);
    } catch (const sdk::ConfigError& e) {
      return e.what();
    }
    return "";
  }
  fs::path root_;
};

TEST_F(HfExportFiles, APlainSplitFileAndShardsOfTheSplitAreSelectedSorted) {
  const fs::path a = touch("train-00001-of-00002.jsonl.gz"), b = touch("train-00000-of-00002.jsonl");
  const fs::path plain = touch("train.json");
  touch("validation.jsonl");
  touch("train_sft.jsonl");  // another split
  touch("training.jsonl");   // another split
  touch("README.md");
  EXPECT_EQ(data::hf_export_files(root_, "", "train"), (std::vector<fs::path>{b, a, plain}));
  EXPECT_EQ(data::hf_export_files(root_, "", "validation"), (std::vector<fs::path>{root_ / "validation.jsonl"}));
}

TEST_F(HfExportFiles, TheConfigPicksASubdirectoryAlsoSearchingDataAndTheSplitDirectory) {
  const fs::path in_data = touch("en/data/test-00000-of-00001.ndjson.zst");
  const fs::path in_split = touch("en/test/part-0.jsonl");
  touch("de/test.jsonl");
  touch("test.jsonl");
  EXPECT_EQ(data::hf_export_files(root_, "en", "test"), (std::vector<fs::path>{in_data, in_split}));
  expect_has(refusal(root_, "fr", "test"), {"no subdirectory 'fr'", "'de'", "'en'"});
}

TEST_F(HfExportFiles, AFileIsTakenAsItIs) {
  const fs::path file = touch("dump.jsonl.xz");
  EXPECT_EQ(data::hf_export_files(file, "", "train"), (std::vector<fs::path>{file}));
}

// (A hub id is looked for in the local caches first: feed::hf_split_files, tests/core/feed/hf_split_files_test.cpp.)
TEST_F(HfExportFiles, AMissingPathIsRefusedSayingThereIsNoHubAccessAndHowToExport) {
  expect_has(refusal("allenai/c4", "en", "train"),
             {"'allenai/c4' is not a local file or directory", "no Hugging Face Hub access",
              "as JSON Lines (a file, or a directory of SPLIT.jsonl or SPLIT-*.jsonl files) or as a save_to_disk "
              "directory of Arrow files, not Parquet",
              "nor a hub id, which kforge looks for in the local Hugging Face caches",
              "load_dataset('allenai/c4', 'en', split='train').save_to_disk('DIR')",
              "(or .to_json('DIR/train.jsonl'))"});
}

TEST_F(HfExportFiles, ParquetOfTheSplitIsRefusedNamingTheFileAndArrowIsTaken) {
  const fs::path parquet = touch("data/train-00000-of-00001.parquet", "PAR1");
  touch("data/train-00001-of-00001.jsonl");
  expect_has(refusal(root_, "", "train"), {parquet.string(), "is Parquet", "JSON Lines or Arrow IPC streams",
                                           "save_to_disk("});
  const fs::path arrow = touch("saved/validation/data-00000-of-00001.arrow", "x");
  EXPECT_EQ(data::hf_export_files(root_ / "saved", "", "validation"), (std::vector<fs::path>{arrow}));
  expect_has(refusal(parquet, "", "train"), {"is Parquet"});
}

TEST_F(HfExportFiles, ASavedDatasetGivesTheArrowFilesItsStateListsInOrder) {
  const fs::path b = touch("saved/data-00001-of-00002.arrow", "x"), a = touch("saved/data-00000-of-00002.arrow", "x");
  touch("saved/cache-1234.arrow", "x");  // not listed: not read
  touch("saved/state.json",
        R"({"_data_files": [{"filename": "data-00001-of-00002.arrow"}, {"filename": "data-00000-of-00002.arrow"}],
            "_split": "train"})");
  EXPECT_EQ(data::hf_export_files(root_ / "saved", "", "train"), (std::vector<fs::path>{b, a}));
  expect_has(refusal(root_ / "saved", "", "validation"),
             {"holds split 'train' (its state.json says so), not split 'validation'"});
  touch("saved/state.json", R"({"_data_files": [{"filename": "gone.arrow"}], "_split": null})");
  expect_has(refusal(root_ / "saved", "", "validation"), {"state.json' lists '", "gone.arrow', which is not there"});
}

TEST_F(HfExportFiles, ASavedDatasetDictGivesItsSplitsFiles) {
  const fs::path test = touch("dict/test/data-00000-of-00001.arrow", "x");
  touch("dict/test/state.json", R"({"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": "test"})");
  touch("dict/dataset_dict.json", R"({"splits": ["test"]})");
  EXPECT_EQ(data::hf_export_files(root_ / "dict", "", "test"), (std::vector<fs::path>{test}));
  expect_has(refusal(root_ / "dict", "", "train"),
             {"(a saved DatasetDict) has no split 'train' with a state.json; its splits: [\"test\"]"});
}

TEST_F(HfExportFiles, NoFileOfTheSplitIsRefusedNamingTheFilesThere) {
  touch("train.jsonl");
  touch("data/validation-00000-of-00001.jsonl");
  expect_has(refusal(root_, "", "test"),
             {"no JSON Lines or Arrow file of split 'test'", "'data/validation-00000-of-00001.jsonl'",
              "'train.jsonl'"});
}

TEST_F(HfExportFiles, TheCacheKeyChangesWithEachInputItNames) {
  const fs::path a = touch("train-0.jsonl", "{\"text\": \"abc\"}\n"), b = touch("train-1.jsonl");
  const std::vector<fs::path> files{a, b};
  const std::string key = data::hf_cache_key(files, "00112233aabbccdd", "text", "train");
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(data::hf_cache_key(files, "00112233aabbccdd", "text", "train"), key) << "not deterministic";
  EXPECT_NE(data::hf_cache_key({a}, "00112233aabbccdd", "text", "train"), key) << "the file list";
  EXPECT_NE(data::hf_cache_key(files, "00112233aabbccde", "text", "train"), key) << "the tokenizer";
  EXPECT_NE(data::hf_cache_key(files, "00112233aabbccdd", "content", "train"), key) << "the text field";
  EXPECT_NE(data::hf_cache_key(files, "00112233aabbccdd", "text", "validation"), key) << "the split";
  const auto mtime = fs::last_write_time(a);
  fs::last_write_time(a, mtime + std::chrono::seconds(1));
  EXPECT_NE(data::hf_cache_key(files, "00112233aabbccdd", "text", "train"), key) << "the modification time";
  fs::last_write_time(a, mtime);
  EXPECT_EQ(data::hf_cache_key(files, "00112233aabbccdd", "text", "train"), key);
  std::ofstream(a) << "{\"text\": \"abcd\"}\n";
  fs::last_write_time(a, mtime);
  EXPECT_NE(data::hf_cache_key(files, "00112233aabbccdd", "text", "train"), key) << "the size";
}

}  // namespace
}  // namespace kforge::test
