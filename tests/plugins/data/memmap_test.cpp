// The memmap dataset plugin: .npy header validation, uint16/uint32, raw .bin with an explicit dtype, tatm's
// metadata.yaml or KempnerForge's guess from the size, window counts and contents across shards (tails dropped, no
// sample crosses a file), make_batch.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>

#include "data/batch.h"
#include "support/data_test_util.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// The message of the sdk::Error that opening `dir` throws ("" when it opens).
std::string open_error(const fs::path& dir, const std::string& pattern = "*.npy", const std::string& data_toml = "",
                       int64_t seq_len = 7) {
  try {
    open_dataset(dir, pattern, seq_len, data_toml);
  } catch (const sdk::Error& e) {
    return e.what();
  }
  return "";
}

TEST(MemmapDataset, WindowsAcrossShardsDropTailsAndNeverCrossFiles) {
  const fs::path dir = temp_dir("memmap_windows");
  // Written out of name order: shards are read sorted by name.
  write_raw_npy(dir / "shard_b.npy", "<u2", false, "(17,)", u16_bytes(arange(100, 17)));  // 2 windows, 1 dropped
  write_raw_npy(dir / "shard_a.npy", "<u2", false, "(20,)", u16_bytes(arange(0, 20)));    // 2 windows, 4 dropped
  write_raw_npy(dir / "shard_c.npy", "<u2", false, "(5,)", u16_bytes(arange(500, 5)));    // < one window
  write_raw_npy(dir / "shard_d.npy", "<u2", false, "(16,)", u16_bytes(arange(900, 16)));  // exactly 2 windows
  std::ofstream(dir / "notes.txt") << "not a shard";
  const auto ds = open_dataset(dir, "shard_*.npy", 7);  // window 8
  ASSERT_EQ(ds->size(), 6);
  EXPECT_EQ(to_vector(ds->window(0)), arange(0, 8));
  EXPECT_EQ(to_vector(ds->window(1)), arange(8, 8));
  EXPECT_EQ(to_vector(ds->window(2)), arange(100, 8));  // not 16..19 + 100..103: no crossing
  EXPECT_EQ(to_vector(ds->window(3)), arange(108, 8));
  EXPECT_EQ(to_vector(ds->window(4)), arange(900, 8));  // shard_c contributes nothing
  EXPECT_EQ(to_vector(ds->window(5)), arange(908, 8));
  EXPECT_EQ(ds->window(0).scalar_type(), at::kLong);
  EXPECT_EQ(ds->window(0).sizes(), at::IntArrayRef({8}));
  EXPECT_THROW(ds->window(6), sdk::Error);
  EXPECT_THROW(ds->window(-1), sdk::Error);
  const std::string d = ds->describe();
  EXPECT_HAS(d, "4 file(s)");
  EXPECT_HAS(d, "58 tokens");
  EXPECT_HAS(d, "uint16");
  EXPECT_HAS(d, "6 windows of 8");
}

TEST(MemmapDataset, Uint32ShardsKeepIdsAbove65535AndVersion2HeadersParse) {
  const fs::path dir = temp_dir("memmap_u32");
  write_raw_npy(dir / "a.npy", "<u4", false, "(24,)", u32_bytes(arange(70000, 24)));
  write_raw_npy(dir / "b.npy", "<u4", false, "(9,)", u32_bytes(arange(4'000'000'000LL, 9)), 2);
  write_raw_npy(dir / "c.npy", "<u2", false, "(8,)", u16_bytes(arange(65528, 8)), 3);  // max uint16 id
  const auto ds = open_dataset(dir, "*.npy", 7);
  ASSERT_EQ(ds->size(), 3 + 1 + 1);
  EXPECT_EQ(to_vector(ds->window(2)), arange(70016, 8));
  EXPECT_EQ(to_vector(ds->window(3)), arange(4'000'000'000LL, 8));
  EXPECT_EQ(to_vector(ds->window(4)), arange(65528, 8));
  EXPECT_HAS(ds->describe(), "uint16+uint32");
}

TEST(MemmapDataset, RandomAccessAgreesWithAFlatReferenceOverManyShards) {
  const fs::path dir = temp_dir("memmap_many");
  std::vector<std::vector<int64_t>> expected;
  int64_t next = 0;
  for (int f = 0; f < 12; ++f) {
    const int64_t n = 3 + (f * 37) % 50;
    const auto values = arange(next, n);
    char name[32];
    std::snprintf(name, sizeof name, "tokens_%03d.npy", f);
    std::string shape = "(";
    shape += std::to_string(n);
    shape += ",)";
    write_raw_npy(dir / name, "<u2", false, shape, u16_bytes(values));
    for (int64_t w = 0; w + 5 <= n; w += 5) expected.emplace_back(values.begin() + w, values.begin() + w + 5);
    next += n;
  }
  const auto ds = open_dataset(dir, "*.npy", 4);
  ASSERT_EQ(ds->size(), static_cast<int64_t>(expected.size()));
  for (int64_t i = ds->size() - 1; i >= 0; --i) EXPECT_EQ(to_vector(ds->window(i)), expected[i]) << "window " << i;
}

TEST(MemmapDataset, BinShardsTakeAnExplicitDtype) {
  const fs::path dir = temp_dir("memmap_bin");
  // 32 bytes: 16 uint16 tokens, or 8 uint32 ones; the size alone would say uint32.
  std::ofstream(dir / "t.bin", std::ios::binary) << u16_bytes(arange(1, 16));
  const auto u16 = open_dataset(dir, "*.bin", 7, "bin_dtype = \"uint16\"\n");
  ASSERT_EQ(u16->size(), 2);
  EXPECT_EQ(to_vector(u16->window(1)), arange(9, 8));

  const fs::path dir32 = temp_dir("memmap_bin32");
  std::ofstream(dir32 / "t.bin", std::ios::binary) << u32_bytes(arange(100000, 17));
  const auto u32 = open_dataset(dir32, "*.bin", 7, "bin_dtype = \"uint32\"\n");
  ASSERT_EQ(u32->size(), 2);
  EXPECT_EQ(to_vector(u32->window(1)), arange(100008, 8));
  EXPECT_HAS(u32->describe(), "uint32");

  std::ofstream(dir32 / "odd.bin", std::ios::binary) << std::string(7, 'x');
  EXPECT_HAS(open_error(dir32, "*.bin", "bin_dtype = \"uint32\"\n"), "odd.bin: 7 bytes is not a whole number");
  EXPECT_HAS(open_error(dir32, "t.bin", "bin_dtype = \"int8\"\n"), "\"int8\" is not supported");
}

// KempnerForge's MemoryMappedDataset without tatm's metadata: uint32 when the size is a multiple of 4 bytes, else
// uint16, per file; the choice is named in describe() and in the error a misread shard then raises.
TEST(MemmapDataset, BinShardsWithoutADtypeAreInferredFromTheSizeAsKempnerForgeDoes) {
  const fs::path dir = temp_dir("memmap_bin_inferred");
  std::ofstream(dir / "a.bin", std::ios::binary) << u32_bytes(arange(100000, 17));  // 68 bytes: uint32
  std::ofstream(dir / "b.bin", std::ios::binary) << u16_bytes(arange(7, 9));        // 18 bytes: uint16
  const auto ds = open_dataset(dir, "*.bin", 7);
  ASSERT_EQ(ds->size(), 2 + 1);
  EXPECT_EQ(to_vector(ds->window(1)), arange(100008, 8));
  EXPECT_EQ(to_vector(ds->window(2)), arange(7, 8));
  EXPECT_HAS(ds->describe(), "uint32 (inferred from the file size as KempnerForge does");
  EXPECT_HAS(ds->describe(), "uint16 (inferred from the file size as KempnerForge does");
  EXPECT_HAS(ds->describe(), "no [data] bin_dtype, no tatm metadata.yaml beside the shards");

  // 16 uint16 tokens are 32 bytes, which the size alone reads as 8 uint32 ids: past the vocabulary, the error says
  // the width was a guess and which key settles it.
  const fs::path even = temp_dir("memmap_bin_misread");
  std::ofstream(even / "t.bin", std::ios::binary) << u16_bytes(arange(1, 16));
  try {
    open_dataset(even, "*.bin", 3, "", /*vocab_size=*/64);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_HAS(std::string(e.what()), ">= [model] vocab_size 64");
    EXPECT_HAS(std::string(e.what()),
               "(uint32 was inferred from the file size: set [data] bin_dtype if the shards hold uint16 tokens)");
  }
}

// tatm's metadata.yaml as `tatm tokenize` writes it (tatm.tokenizer.metadata.write_metadata: yaml.dump of the
// metadata with its tokenized_info), written by python3's PyYAML; `info` is tokenized_info as a Python literal.
fs::path write_tatm_metadata(const fs::path& dir, const std::string& info) {
  const fs::path file = dir / "metadata.yaml";
  const std::string script =
      "import sys, yaml; open(sys.argv[1], 'w').write(yaml.dump({'name': 'tokenized', 'dataset_path': sys.argv[2], "
      "'description': 'Tokenized dataset created using tatm', 'date_downloaded': '', 'download_source': "
      "'Tokenized by tatm', 'data_content': 'text', 'content_field': 'NA', 'corpuses': [], 'tokenized_info': " +
      info + "}))";
  std::string output;
  const int status = run_command(std::string(KFORGE_PYTHON) + " -c \"" + script + "\" '" + file.string() + "' '" +
                                     dir.string() + "'",
                                 &output);
  EXPECT_EQ(status, 0) << output;
  return file;
}

std::string tokenized_info(const std::string& dtype, const std::string& vocab_size) {
  return "{'tokenizer': 't5-base', 'file_prefix': '/data/tokenized', 'dtype': '" + dtype +
         "', 'file_extension': 'bin', 'vocab_size': " + vocab_size +
         ", 'tatm_version': '0.2.0', 'tokenizers_version': '0.19.1'}";
}

TEST(MemmapDataset, TatmMetadataYamlGivesTheWidthAndTheVocabulary) {
  const fs::path dir = temp_dir("memmap_bin_tatm");
  std::ofstream(dir / "tokenized_0.bin", std::ios::binary) << u16_bytes(arange(1, 16));  // 32 bytes of uint16
  const fs::path meta = write_tatm_metadata(dir, tokenized_info("uint16", "32100"));
  const auto ds = open_dataset(dir, "tokenized_*.bin", 7);
  ASSERT_EQ(ds->size(), 2);
  EXPECT_EQ(to_vector(ds->window(1)), arange(9, 8));
  EXPECT_HAS(ds->describe(), "uint16 (tokenized_info.dtype in " + meta.string() + ")");

  // An explicit bin_dtype that agrees is taken; one that contradicts the metadata names both.
  EXPECT_EQ(open_dataset(dir, "*.bin", 7, "bin_dtype = \"uint16\"\n")->size(), 2);
  try {
    open_dataset(dir, "*.bin", 7, "bin_dtype = \"uint32\"\n");
    FAIL() << "no error";
  } catch (const sdk::ConfigError& e) {
    EXPECT_HAS(std::string(e.what()), "tokenized_0.bin: [data] bin_dtype = \"uint32\" contradicts tokenized_info.dtype "
                                      "= \"uint16\" in " + meta.string());
  }

  // Ids at or past tokenized_info.vocab_size.
  write_tatm_metadata(dir, tokenized_info("uint16", "10"));
  EXPECT_HAS(open_error(dir, "*.bin"), "token id 10 at position 9 is outside the vocabulary of 10 ids "
                                       "(tokenized_info.vocab_size in " + meta.string() + ")");

  // A width the dataset cannot read, a vocab_size that is not one, and a file that is not YAML.
  write_tatm_metadata(dir, tokenized_info("int32", "32100"));
  EXPECT_HAS(open_error(dir, "*.bin"), meta.string() + ": tokenized_info.dtype = \"int32\"");
  write_tatm_metadata(dir, tokenized_info("uint16", "'many'"));
  EXPECT_HAS(open_error(dir, "*.bin"), "tokenized_info.vocab_size = many: expected a positive integer");
  std::ofstream(meta) << "name: x\ntokenized_info: [uint16\n";
  EXPECT_HAS(open_error(dir, "*.bin"), meta.string() + ":3: not valid YAML");

  // A tatm metadata.yaml of untokenised data (no tokenized_info): the width is inferred, and says so.
  std::ofstream(meta) << "name: raw\ndata_content: text\n";
  EXPECT_HAS(open_dataset(dir, "*.bin", 7)->describe(),
             "no [data] bin_dtype, no tokenized_info.dtype in " + meta.string());
}

TEST(MemmapDataset, NpyHeaderErrorsNameTheFileAndTheFault) {
  struct Case {
    const char* label;
    std::string descr, shape, data;
    bool fortran;
    const char* expected;
  };
  const std::string ten = u16_bytes(arange(0, 10));
  const std::vector<Case> cases = {
      {"float", "<f4", "(10,)", std::string(40, '\0'), false, "unsupported dtype '<f4'"},
      {"bytes", "|u1", "(10,)", std::string(10, '\0'), false, "unsupported dtype '|u1'"},
      {"bigendian", ">u2", "(10,)", ten, false, "unsupported dtype '>u2'"},
      {"int64", "<i8", "(10,)", std::string(80, '\0'), false, "unsupported dtype '<i8'"},
      {"fortran", "<u2", "(10,)", ten, true, "fortran_order is True"},
      {"twod", "<u2", "(2, 5)", ten, false, "shape (2, 5) is not 1-D"},
      {"scalar", "<u2", "()", u16_bytes({1}), false, "shape () is not 1-D"},
      {"truncated", "<u2", "(12,)", ten, false, "the file is truncated"},
      {"trailing", "<u2", "(9,)", ten, false, "longer than its header says"},
  };
  for (const Case& c : cases) {
    const fs::path dir = temp_dir(std::string("memmap_bad_") + c.label);
    write_raw_npy(dir / "bad.npy", c.descr, c.fortran, c.shape, c.data);
    const std::string err = open_error(dir);
    EXPECT_HAS(err, (dir / "bad.npy").string()) << c.label;
    EXPECT_HAS(err, c.expected) << c.label;
  }
  const fs::path dir = temp_dir("memmap_bad_magic");
  std::ofstream(dir / "bad.npy", std::ios::binary) << "PK\x03\x04 this is a zip, not an array";
  EXPECT_HAS(open_error(dir), "bad.npy: not a .npy file (bad magic");

  const fs::path vdir = temp_dir("memmap_bad_version");
  write_raw_npy(vdir / "v.npy", "<u2", false, "(10,)", ten, 4);
  EXPECT_HAS(open_error(vdir), "unsupported .npy format version 4.0");

  const fs::path edir = temp_dir("memmap_empty_file");
  std::ofstream(edir / "e.npy");
  EXPECT_HAS(open_error(edir), "e.npy: not a .npy file");
}

// The spec's vocab_size ([model] vocab_size in a run): a shard holding an id at or past it is refused as the data
// opens, naming the file, the first such id and its position in the shard, even where no window would draw it yet;
// ids below it, and no vocab_size at all, open.
TEST(MemmapDataset, AnIdAtOrPastTheSpecsVocabSizeIsRefusedAtOpenNamingTheFileAndTheFirstPosition) {
  const fs::path dir = temp_dir("memmap_vocab");
  std::vector<int64_t> ids = arange(0, 40);  // ids 0..39; 39 lies in the dropped tail (windows of 8)
  ids[13] = 50;
  ids[21] = 60;
  write_raw_npy(dir / "a.npy", "<u2", false, "(40,)", u16_bytes(ids));
  try {
    open_dataset(dir, "*.npy", 7, "", 50);
    FAIL() << "an id of 50 opened with vocab_size 50";
  } catch (const sdk::Error& e) {
    EXPECT_HAS(e.what(), (dir / "a.npy").string() + ": token id 50 at position 13 is >= [model] vocab_size 50");
  }
  EXPECT_EQ(open_dataset(dir, "*.npy", 7, "", 61)->size(), 5);
  EXPECT_EQ(open_dataset(dir, "*.npy", 7)->size(), 5);
  ids[13] = 13;
  ids[21] = 21;
  write_raw_npy(dir / "a.npy", "<u2", false, "(40,)", u16_bytes(ids));
  try {
    open_dataset(dir, "*.npy", 7, "", 39);  // only the dropped tail's 39 is past it
    FAIL() << "an id of 39 opened with vocab_size 39";
  } catch (const sdk::Error& e) {
    EXPECT_HAS(e.what(), "token id 39 at position 39 is >= [model] vocab_size 39");
  }
}

TEST(MemmapDataset, MissingDirectoryNoMatchAndTooLittleDataAreClear) {
  const fs::path dir = temp_dir("memmap_missing");
  EXPECT_HAS(open_error(dir / "nope"), "data directory '" + (dir / "nope").string() + "' does not exist");
  write_raw_npy(dir / "a.npy", "<u2", false, "(5,)", u16_bytes(arange(0, 5)));
  const std::string none = open_error(dir, "*.bin");
  EXPECT_HAS(none, "no file in '" + dir.string() + "' matches file_pattern '*.bin'");
  const std::string small = open_error(dir);  // 5 tokens, window 8
  EXPECT_HAS(small, "5 tokens in 1 file(s)");
  EXPECT_HAS(small, "one window of 8 tokens");
  EXPECT_EQ(open_error(dir, "*.npy", "", 4), "");  // window 5 fits
  std::ofstream(dir / "x.txt") << "text";
  EXPECT_HAS(open_error(dir, "*"), "unsupported shard extension '.txt'");
}

TEST(MakeBatch, InputsAndLabelsAreTheWindowShiftedByOne) {
  const fs::path dir = temp_dir("memmap_batch");
  write_raw_npy(dir / "a.npy", "<u2", false, "(40,)", u16_bytes(arange(0, 40)));
  const auto ds = open_dataset(dir, "*.npy", 7);
  const data::Batch b = data::make_batch(*ds, {4, 0, 2});
  ASSERT_EQ(b.input_ids.sizes(), at::IntArrayRef({3, 7}));
  ASSERT_EQ(b.labels.sizes(), at::IntArrayRef({3, 7}));
  EXPECT_EQ(b.input_ids.scalar_type(), at::kLong);
  EXPECT_EQ(b.labels.scalar_type(), at::kLong);
  EXPECT_EQ(to_vector(b.input_ids[0]), arange(32, 7));
  EXPECT_EQ(to_vector(b.labels[0]), arange(33, 7));
  EXPECT_EQ(to_vector(b.input_ids[1]), arange(0, 7));
  EXPECT_EQ(to_vector(b.labels[2]), arange(17, 7));
  EXPECT_THROW(data::make_batch(*ds, {}), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
