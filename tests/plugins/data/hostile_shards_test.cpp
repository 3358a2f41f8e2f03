// Hostile shards (issue 13): crafted .npy headers (shapes near 2^62, past int64, negative), truncated
// files, symlink loops and out-of-vocabulary ids are refused by name, and nothing is read out of bounds.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "data/batch.h"
#include "kforge/sdk/error.h"
#include "npy_header.h"
#include "support/data_test_util.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// The message of the sdk::Error that opening `dir` (windows of 8 tokens) throws ("" when it opens).
std::string hostile_open_error(const fs::path& dir, const std::string& pattern = "*.npy") {
  try {
    open_dataset(dir, pattern, 7);
  } catch (const sdk::Error& e) {
    return e.what();
  }
  return "";
}

// A .npy file: magic, version `major`.0, the header length, the header text `dict` + '\n', then `data`.
std::string npy_file_bytes(const std::string& dict, const std::string& data = "", int major = 1) {
  const std::string text = dict + "\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (int b = 0; b < (major == 1 ? 2 : 4); ++b) out += static_cast<char>((text.size() >> (8 * b)) & 0xff);
  return out + text + data;
}

std::string token_dict(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

// `bytes` copied to the very end of a readable page that an inaccessible page follows: a read past the
// last byte faults at once instead of going unnoticed.
class GuardedBytes {
 public:
  explicit GuardedBytes(const std::string& bytes) : size_(bytes.size()) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    span_ = (size_ / page + 2) * page;
    base_ =
        static_cast<unsigned char*>(::mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(static_cast<void*>(base_), MAP_FAILED);
    EXPECT_EQ(::mprotect(base_ + span_ - page, page, PROT_NONE), 0);
    data_ = base_ + span_ - page - size_;
    if (size_ > 0) std::memcpy(data_, bytes.data(), size_);
  }
  ~GuardedBytes() { ::munmap(base_, span_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  size_t size_, span_ = 0;
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
};

// The sdk::Error message parse_npy_header gives for `bytes` as a whole file, or "" when it accepts them
// (and then its answer must describe tokens that fill the rest of the file exactly).
std::string parse_error(const std::string& bytes) {
  const GuardedBytes file(bytes);
  try {
    const builtin::data::NpyInfo info = builtin::data::parse_npy_header("fuzz.npy", file.data(), file.size());
    EXPECT_TRUE(info.itemsize == 2 || info.itemsize == 4);
    EXPECT_GE(info.length, 0);
    EXPECT_LE(info.data_offset, file.size());
    const size_t data_bytes = file.size() - std::min(info.data_offset, file.size());
    EXPECT_EQ(data_bytes % info.itemsize, 0u);
    EXPECT_EQ(static_cast<int64_t>(data_bytes / info.itemsize), info.length);
    return "";
  } catch (const sdk::Error& e) {
    return e.what();
  }
}

TEST(HostileShards, ShapeWhoseByteCountWrapsToTheFileSizeIsRefused) {
  // (2^62 + 5) uint32 tokens need 2^64 + 20 bytes: modulo 2^64, the 20 this file holds.
  const fs::path dir = temp_dir("hostile_wrap");
  std::ofstream(dir / "a.npy", std::ios::binary)
      << npy_file_bytes(token_dict("<u4", "(4611686018427387909,)"), u32_bytes(arange(0, 5)));
  const std::string err = hostile_open_error(dir);
  EXPECT_HAS(err, (dir / "a.npy").string());
  EXPECT_HAS(err, "shape (4611686018427387909,) of 4-byte tokens needs more than 2^64 data bytes");
}

TEST(HostileShards, AWrappedShapeAmongThreeShardsIsRefusedAtOpenBeforeAnyWindowIsRead) {
  // Before the fix this opened, and reading the crafted shard's windows ran off its mapping (SIGSEGV).
  const fs::path dir = temp_dir("hostile_wrap3");
  write_raw_npy(dir / "a.npy", "<u2", false, "(16,)", u16_bytes(arange(0, 16)));
  write_raw_npy(dir / "b.npy", "<u2", false, "(16,)", u16_bytes(arange(100, 16)));
  std::ofstream(dir / "c.npy", std::ios::binary)
      << npy_file_bytes(token_dict("<u4", "(4611686018427387909,)"), u32_bytes(arange(0, 5)));
  const std::string err = hostile_open_error(dir);
  EXPECT_HAS(err, (dir / "c.npy").string());
  EXPECT_HAS(err, "needs more than 2^64 data bytes");
}

TEST(HostileShards, ShapesPastInt64AreRefusedNotWrappedToNegativeOrSmallLengths) {
  struct Case {
    const char* label;
    std::string shape;
  };
  const std::vector<Case> cases = {
      {"two_to_63_plus_10", "(9223372036854775818,)"},   // int64 wraps negative; * 2 wraps to 20 bytes
      {"two_to_64_plus_10", "(18446744073709551626,)"},  // uint64 wraps to 10 tokens = 20 bytes
      {"forty_digits", "(" + std::string(40, '9') + ",)"},
  };
  for (const Case& c : cases) {
    const fs::path dir = temp_dir(std::string("hostile_big_") + c.label);
    std::ofstream(dir / "big.npy", std::ios::binary)
        << npy_file_bytes(token_dict("<u2", c.shape), u16_bytes(arange(0, 10)));
    const std::string err = hostile_open_error(dir);
    EXPECT_HAS(err, (dir / "big.npy").string()) << c.label;
    EXPECT_HAS(err, "is larger than any file (over 2^63)") << c.label;
  }
}

TEST(NpyHeaderParser, RefusesEveryMalformedHeaderNamingTheFault) {
  const std::string ten = u16_bytes(arange(0, 10));
  const std::string good = token_dict("<u2", "(10,)");
  const std::string v2_huge = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + good + "\n" + ten;
  std::string v1_one_past = npy_file_bytes(good);  // header length one byte past the end of the file
  v1_one_past[8] = static_cast<char>(v1_one_past[8] + 1);
  struct Case {
    const char* label;
    std::string bytes;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"empty", "", "not a .npy file"},
      {"magic_only", std::string("\x93NUMPY", 6), "not a .npy file"},
      {"v1_prefix_only", std::string("\x93NUMPY\x01\x00\x76\x00", 10), "truncated .npy header"},
      {"v2_eleven_bytes", std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11), "truncated .npy header"},
      {"v2_header_length_4GiB", v2_huge, "truncated .npy header: it declares 4294967295 header bytes"},
      {"v1_header_length_past_eof", v1_one_past, "truncated .npy header"},
      {"unknown_key", npy_file_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (10,), 'x': 1}", ten),
       "unexpected or repeated key 'x'"},
      {"repeated_key", npy_file_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (5,), 'shape': (10,)}", ten),
       "unexpected or repeated key 'shape'"},
      {"missing_key", npy_file_bytes("{'descr': '<u2', 'shape': (10,)}", ten), "it needs the keys"},
      {"no_braces", npy_file_bytes("'descr': '<u2', 'fortran_order': False, 'shape': (10,)", ten), "expected '{'"},
      {"unterminated", npy_file_bytes("{'descr': '<u2", ten), "unterminated string"},
      {"fortran_falsey", npy_file_bytes("{'descr': '<u2', 'fortran_order': Falsey, 'shape': (10,)}", ten),
       "neither True nor False"},
      {"fortran_zero", npy_file_bytes("{'descr': '<u2', 'fortran_order': 0, 'shape': (10,)}", ten),
       "neither True nor False"},
      {"descr_not_string", npy_file_bytes("{'descr': 5, 'fortran_order': False, 'shape': (10,)}", ten),
       "expected the descr value"},
      {"descr_with_suffix", npy_file_bytes(token_dict("<u2x", "(10,)"), ten), "unsupported dtype '<u2x'"},
      {"negative", npy_file_bytes(token_dict("<u2", "(-10,)"), ten), "not a tuple of non-negative integers"},
      {"plus_sign", npy_file_bytes(token_dict("<u2", "(+10,)"), ten), "not a tuple of non-negative integers"},
      {"hex", npy_file_bytes(token_dict("<u2", "(0x0a,)"), ten), "expected ','"},
      {"float", npy_file_bytes(token_dict("<u2", "(1e1,)"), ten), "expected ','"},
      {"nested", npy_file_bytes(token_dict("<u2", "((10,),)"), ten), "not a tuple of non-negative integers"},
      {"shape_not_tuple", npy_file_bytes(token_dict("<u2", "10"), ten), "expected '('"},
      {"text_after_dict", npy_file_bytes(good + " junk", ten), "text after the closing '}'"},
      {"nul_after_dict", npy_file_bytes(good + std::string(1, '\0'), ten), "text after the closing '}'"},
      {"wrapped_product", npy_file_bytes(token_dict("<u4", "(4611686018427387909,)"), u32_bytes(arange(0, 5))),
       "needs more than 2^64 data bytes"},
      {"product_past_eof", npy_file_bytes(token_dict("<u4", "(2305843009213693952,)"), ten),
       "needs 9223372036854775808 data bytes"},
      {"int64_max_plus_one", npy_file_bytes(token_dict("<u2", "(9223372036854775808,)"), ten),
       "shape dimension 9223372036854775808 is larger than any file"},
      {"two_d_product_wraps", npy_file_bytes(token_dict("<u2", "(4294967296, 4294967296)"), ten), "is not 1-D"},
  };
  for (const Case& c : cases) {
    const std::string err = parse_error(c.bytes);
    EXPECT_HAS(err, "fuzz.npy: ") << c.label;
    EXPECT_HAS(err, c.expected) << c.label;
  }
  EXPECT_EQ(parse_error(npy_file_bytes(good, ten)), "");
  EXPECT_EQ(parse_error(npy_file_bytes("{\"shape\": (10L,), \"fortran_order\": False, \"descr\": \"<u2\"}", ten)), "");
}

TEST(NpyHeaderParser, NeverReadsOutsideTheBufferForAnyPrefixOrPatchedByte) {
  // Every prefix of a valid file, and every header byte replaced by each of the characters that steer
  // the parser, with the buffer ending right at an inaccessible page: each is refused with sdk::Error
  // or accepted with a length that fills the file exactly (parse_error checks), and none faults.
  const std::string patches("\x00\xff(),'\"9 {}:-LT\n", 16);
  for (int major : {1, 2}) {
    const std::string valid = npy_file_bytes(token_dict("<u2", "(10,)"), u16_bytes(arange(0, 10)), major);
    int accepted = 0;
    for (size_t n = 0; n <= valid.size(); ++n) accepted += parse_error(valid.substr(0, n)).empty() ? 1 : 0;
    EXPECT_EQ(accepted, 1) << "only the whole file is a valid shard (version " << major << ")";
    const size_t header_end = valid.size() - 20;
    for (size_t i = 0; i < header_end; ++i) {
      for (char p : patches) {
        std::string bytes = valid;
        bytes[i] = p;
        parse_error(bytes);
      }
    }
  }
}

TEST(HostileShards, ASymlinkLoopIsNamedAndHidesNoOtherShard) {
  const fs::path dir = temp_dir("hostile_loop");
  write_raw_npy(dir / "a.npy", "<u2", false, "(16,)", u16_bytes(arange(0, 16)));
  write_raw_npy(dir / "b.npy", "<u2", false, "(16,)", u16_bytes(arange(100, 16)));
  fs::create_symlink("loop.npy", dir / "loop.npy");  // points at itself
  fs::create_symlink("cycle", dir / "cycle");        // a loop file_pattern does not select
  // A shard the pattern selects but cannot be opened is refused by name: skipping it would train on less data.
  const std::string err = hostile_open_error(dir);
  EXPECT_HAS(err, (dir / "loop.npy").string() + ": matches file_pattern '*.npy' but cannot be opened");
  EXPECT_HAS(err, "symbolic links");
  EXPECT_HAS(err, "narrow [data] file_pattern");
  // The loops hide nothing the pattern selects.
  ASSERT_EQ(hostile_open_error(dir, "[ab].npy"), "");
  EXPECT_EQ(open_dataset(dir, "[ab].npy", 7)->size(), 4);

  const fs::path dangling = temp_dir("hostile_dangling");
  write_raw_npy(dangling / "a.npy", "<u2", false, "(16,)", u16_bytes(arange(0, 16)));
  fs::create_symlink("moved_away.npy", dangling / "gone.npy");
  const std::string gone = hostile_open_error(dangling);
  EXPECT_HAS(gone, (dangling / "gone.npy").string() + ": matches file_pattern '*.npy' but cannot be opened");
  EXPECT_HAS(gone, "No such file or directory");
}

// A prepare-data output directory: metadata.json (vocab_size 1000) listing train/tokens_000.npy and
// train/tokens_001.npy; the second holds `bad_id` at position 11.
fs::path prepared_dir(const std::string& label, int64_t bad_id, bool with_metadata) {
  const fs::path out = temp_dir(label);
  fs::create_directories(out / "train");
  write_raw_npy(out / "train" / "tokens_000.npy", "<u2", false, "(16,)", u16_bytes(arange(0, 16)));
  std::vector<int64_t> ids = arange(500, 16);
  ids[11] = bad_id;
  write_raw_npy(out / "train" / "tokens_001.npy", "<u2", false, "(16,)", u16_bytes(ids));
  if (with_metadata) {
    std::ofstream(out / "metadata.json") << R"({"format": "kforge-tokens-v1", "vocab_size": 1000, "shards": )"
                                         << R"({"train": ["train/tokens_000.npy", "train/tokens_001.npy"], )"
                                         << R"("eval": []}})";
  }
  return out;
}

TEST(HostileShards, AnIdPastThePreparedVocabularyIsNamedAtOpenWithFilePositionAndVocabSize) {
  const fs::path bad = prepared_dir("hostile_vocab_bad", 4242, true);
  const std::string err = hostile_open_error(bad / "train");
  EXPECT_HAS(err, (bad / "train" / "tokens_001.npy").string() + ": token id 4242 at position 11");
  EXPECT_HAS(err, "outside the vocabulary of 1000 ids (vocab_size in " + (bad / "metadata.json").string());
  // Ids below the vocabulary open; so do shards without metadata.json (nothing to check them against).
  EXPECT_EQ(hostile_open_error(prepared_dir("hostile_vocab_good", 999, true) / "train"), "");
  EXPECT_EQ(hostile_open_error(prepared_dir("hostile_vocab_nometa", 4242, false) / "train"), "");
}

TEST(HostileShards, DescribeNamesTheLargestTokenIdAndWhereItIs) {
  const fs::path out = prepared_dir("hostile_describe", 9000, false);
  const auto ds = open_dataset(out / "train", "*.npy", 7);
  EXPECT_HAS(ds->describe(),
             "largest token id 9000 (in " + (out / "train" / "tokens_001.npy").string() + " at position 11)");
}

TEST(MakeBatch, AnIdAtOrPastTheVocabSizeIsNamedWithItsWindowPositionAndFile) {
  const fs::path out = prepared_dir("hostile_batch_vocab", 9000, false);
  const auto ds = open_dataset(out / "train", "*.npy", 7);  // windows 0, 1: tokens_000; 2, 3: tokens_001
  EXPECT_NO_THROW(data::make_batch(*ds, {0, 1, 2}, 8000));
  EXPECT_NO_THROW(data::make_batch(*ds, {3}));  // no vocab size given: no check
  try {
    data::make_batch(*ds, {1, 3}, 8000);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    const std::string err = e.what();
    EXPECT_HAS(err, "sample window 3: token id 9000 at position 3 of the window is >= [model] vocab_size 8000");
    EXPECT_HAS(err, (out / "train" / "tokens_001.npy").string() + " at position 11");
  }
}

}  // namespace
}  // namespace kforge::test
