// prepare-data end to end: a trained 300-piece tokenizer, train/eval shards that numpy reads with the
// right dtype and length, tokens that decode back to the text, the memmap dataset over them, errors;
// JSON Lines and compressed inputs, bad lines, any thread count and chunk size, the document index.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "data/npy_writer.h"
#include "data/prepare.h"
#include "data/progress.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"
#include "support/data_test_util.h"
#include "support/oracle.h"
#include "support/test_host.h"
#include "support/xxhsum.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// Deterministic English-like paragraphs from invented words (lines within a paragraph wrap at 70 chars).
std::vector<std::string> make_paragraphs(int count) {
  static const char* syllables[] = {"ka", "lo", "mer", "sin", "tha", "ve", "ron", "di", "an", "que", "bel", "to",
                                    "ris", "na", "por", "el", "fu", "gan", "ist", "om"};
  static const char* common[] = {"the", "and", "of", "to", "a", "in", "was", "her", "it", "that"};
  uint64_t state = 12345;
  auto next = [&](uint64_t mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % mod);
  };
  std::vector<std::string> lexicon;
  for (int i = 0; i < 150; ++i) {
    std::string w;
    const int n = 1 + next(3);
    for (int k = 0; k < n; ++k) w += syllables[next(20)];
    lexicon.push_back(w);
  }
  std::vector<std::string> paragraphs;
  for (int p = 0; p < count; ++p) {
    std::string text;
    const int sentences = 2 + next(3);
    for (int s = 0; s < sentences; ++s) {
      const int words = 4 + next(8);
      for (int w = 0; w < words; ++w) {
        std::string word = next(3) == 0 ? common[next(10)] : lexicon[next(150)];
        if (w == 0) word[0] = static_cast<char>(std::toupper(word[0]));
        text += (text.empty() ? "" : " ") + word + (w + 1 == words ? "." : (next(6) == 0 ? "," : ""));
      }
    }
    paragraphs.push_back(text);
  }
  return paragraphs;
}

// The paragraphs as a file: wrapped lines, blank lines (some with spaces) between paragraphs.
fs::path write_corpus(const fs::path& dir, const std::vector<std::string>& paragraphs) {
  const fs::path path = dir / "corpus.txt";
  std::ofstream out(path);
  out << "\n";  // leading blank line: no empty document
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    std::istringstream words(paragraphs[i]);
    std::string word, line;
    while (words >> word) {
      if (line.size() + word.size() > 70) {
        out << line << "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out << line << "\n" << (i % 3 == 0 ? "  \n\n" : "\n");
  }
  return path;
}

std::vector<int> read_u16_npy(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.substr(0, 6), std::string("\x93NUMPY", 6));
  const size_t offset = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
  EXPECT_HAS(bytes.substr(10, offset - 10), "'descr': '<u2'");
  std::vector<int> ids;
  for (size_t i = offset; i + 1 < bytes.size(); i += 2) {
    ids.push_back(static_cast<unsigned char>(bytes[i]) | (static_cast<unsigned char>(bytes[i + 1]) << 8));
  }
  return ids;
}

int run_cli(std::vector<std::string> args, std::string* err = nullptr) {
  args.insert(args.begin(), "prepare-data");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  const int rc = cli::cmd_prepare_data(static_cast<int>(argv.size()), argv.data());
  const std::string e = testing::internal::GetCapturedStderr();
  const std::string o = testing::internal::GetCapturedStdout();
  if (err != nullptr) *err = e + o;
  return rc;
}

// Every file prepare-data wrote under dir's train/, eval/ and doc_index/, by relative path, with its bytes.
std::map<std::string, std::string> read_outputs(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const char* sub : {"train", "eval", "doc_index"}) {
    if (!fs::exists(dir / sub)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir / sub)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      files[fs::relative(e.path(), dir).string()] =
          std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
  }
  return files;
}

nlohmann::json read_metadata(const fs::path& dir) {
  std::ifstream in(dir / "metadata.json");
  return nlohmann::json::parse(in);
}

// The documents of a split, decoded (tokens up to each EOS).
std::vector<std::string> decode_documents(const fs::path& dir, const std::string& split, const data::Tokenizer& tok) {
  std::vector<std::string> docs;
  std::vector<int> current;
  const nlohmann::json meta = read_metadata(dir);
  for (const auto& name : meta["shards"][split]) {
    for (int id : read_u16_npy(dir / name.get<std::string>())) {
      if (id != tok.eos_id()) {
        current.push_back(id);
        continue;
      }
      docs.push_back(tok.decode(current));
      current.clear();
    }
  }
  EXPECT_TRUE(current.empty()) << split << " ends inside a document";
  return docs;
}

class PrepareData : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(temp_dir("prepare"));
    paragraphs_ = new std::vector<std::string>(make_paragraphs(80));
    corpus_ = new fs::path(write_corpus(*dir_, *paragraphs_));
    std::string out;
    rc_ = run_cli({"--input", corpus_->string(), "--output", (*dir_ / "out").string(), "--train-tokenizer",
                   "--vocab-size", "300", "--eval-fraction", "0.2", "--shard-tokens", "500"},
                  &out);
    *output_ = out;
  }
  static inline fs::path* dir_ = nullptr;
  static inline fs::path* corpus_ = nullptr;
  static inline std::vector<std::string>* paragraphs_ = nullptr;
  static inline int rc_ = -1;
  static inline std::string* output_ = new std::string;
  static fs::path out() { return *dir_ / "out"; }
  static fs::path model() { return out() / "tokenizer.model"; }
  // prepare-data with the suite's tokenizer, --eval-fraction 0.2 and --shard-tokens 500, into dir_/NAME.
  static int prepare(const std::string& name, std::vector<std::string> inputs, std::vector<std::string> extra,
                     std::string* log) {
    std::vector<std::string> args{
        "--output", (*dir_ / name).string(), "--tokenizer", model().string(), "--eval-fraction",
        "0.2",      "--shard-tokens",        "500",         "--overwrite"};
    for (const auto& i : inputs) args.insert(args.end(), {"--input", i});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, log);
  }
  static fs::path shard(const std::string& split, int i) {
    char name[32];
    std::snprintf(name, sizeof name, "tokens_%03d.npy", i);
    return out() / split / name;
  }
};

TEST_F(PrepareData, WritesShardsMetadataAndTheTokenizer) {
  ASSERT_EQ(rc_, 0) << *output_;
  EXPECT_HAS(*output_, "dataset_path = \"" + (out() / "train").string() + "\"");
  EXPECT_HAS(*output_, "tokenizer.model (sentencepiece, 300 pieces");  // says which kind it loaded
  EXPECT_TRUE(fs::is_regular_file(out() / "tokenizer.model"));
  std::ifstream in(out() / "metadata.json");
  const nlohmann::json meta = nlohmann::json::parse(in);
  EXPECT_EQ(meta["vocab_size"], 300);
  EXPECT_EQ(meta["dtype"], "uint16");
  EXPECT_EQ(meta["tokenizer"], fs::absolute(out() / "tokenizer.model").lexically_normal().string());
  EXPECT_EQ(meta["documents"]["train"], 64);
  EXPECT_EQ(meta["documents"]["eval"], 16);
  EXPECT_EQ(meta["sources"][0]["bytes"], fs::file_size(*corpus_));
  EXPECT_EQ(meta["sources"][0]["text_bytes"], fs::file_size(*corpus_));
  EXPECT_EQ(meta["sources"][0]["compression"], "none");
  EXPECT_EQ(meta["sources"][0]["format"], "text");
  EXPECT_EQ(meta["sources"][0]["documents"], 80);
  EXPECT_EQ(meta["skipped_lines"], 0);
  ASSERT_TRUE(xxhsum_available()) << "xxhsum (Debian xxhash, scripts/setup.sh) checks the tokenizer hash";
  EXPECT_EQ(meta["tokenizer_xxh3_64"], xxhsum_h3(out() / "tokenizer.model"));
  EXPECT_EQ(meta["tokenizer_kind"], "sentencepiece");
  EXPECT_EQ(meta["document_index"]["train"].size(), meta["shards"]["train"].size());
  EXPECT_EQ(meta["document_index"]["train"][0], "doc_index/train/tokens_000.docs.npy");
  for (const std::string split : {"train", "eval"}) {
    int64_t total = 0;
    const auto& shards = meta["shards"][split];
    ASSERT_FALSE(shards.empty()) << split;
    for (size_t i = 0; i < shards.size(); ++i) {
      EXPECT_EQ(out() / shards[i].get<std::string>(), shard(split, static_cast<int>(i)));
      const auto ids = read_u16_npy(out() / shards[i].get<std::string>());
      if (i + 1 < shards.size()) EXPECT_EQ(ids.size(), 500u);  // full shards but the last
      EXPECT_LE(ids.size(), 500u);
      total += static_cast<int64_t>(ids.size());
    }
    EXPECT_EQ(meta["tokens"][split], total) << split;
  }
  EXPECT_GT(meta["shards"]["train"].size(), 1u);
}

TEST_F(PrepareData, TokensDecodeBackToTheDocumentsWithEosAfterEach) {
  ASSERT_EQ(rc_, 0) << *output_;
  const data::Tokenizer tok(out() / "tokenizer.model");
  EXPECT_EQ(tok.vocab_size(), 300);
  EXPECT_EQ(tok.eos_id(), 2);
  std::vector<std::string> docs;
  for (const std::string split : {"train", "eval"}) {
    std::vector<int> ids;
    for (int i = 0; fs::exists(shard(split, i)); ++i) {
      const auto part = read_u16_npy(shard(split, i));
      ids.insert(ids.end(), part.begin(), part.end());
    }
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.back(), tok.eos_id()) << split << " ends with a document's EOS";
    std::vector<int> current;
    for (int id : ids) {
      if (id == tok.eos_id()) {
        docs.push_back(tok.decode(current));
        current.clear();
      } else {
        EXPECT_NE(id, tok.unk_id());
        current.push_back(id);
      }
    }
    if (split == "train") EXPECT_EQ(docs.size(), 64u);
  }
  ASSERT_EQ(docs.size(), paragraphs_->size());
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(docs[i], (*paragraphs_)[i]) << "document " << i;
}

TEST_F(PrepareData, NumpyReadsTheShardsWithTheRightDtypeAndLength) {
  ASSERT_EQ(rc_, 0) << *output_;
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the .npy reader (scripts/setup.sh)";
  for (const char* file : {"train/tokens_000.npy", "train/tokens_001.npy", "eval/tokens_000.npy"}) {
    const auto ids = read_u16_npy(out() / file);
    int64_t sum = 0;
    for (int v : ids) sum += v;
    std::string got;
    ASSERT_EQ(run_oracle("data_npy_check.py", {(out() / file).string()}, &got), 0) << got;
    EXPECT_HAS(got, "dtype=uint16 len=" + std::to_string(ids.size()) + " sum=" + std::to_string(sum)) << file;
  }
}

// metadata.json read by python's json and the shards it lists by numpy: split, shard count, tokens,
// documents, each equal to what kforge's own reading of the shards finds.
TEST_F(PrepareData, PythonReadsTheMetadataAndTheShardsItLists) {
  ASSERT_EQ(rc_, 0) << *output_;
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with numpy is the metadata reader (scripts/setup.sh)";
  std::string got;
  ASSERT_EQ(run_oracle("read_formats.py", {"prepared", out().string()}, &got), 0) << got;
  for (const auto& [split, documents] : {std::pair<std::string, int>{"train", 64}, {"eval", 16}}) {
    int shards = 0;
    size_t tokens = 0;
    for (; fs::exists(shard(split, shards)); ++shards) tokens += read_u16_npy(shard(split, shards)).size();
    EXPECT_HAS(got, fmt::format("{}\t{}\t{}\t{}\n", split, shards, tokens, documents));
  }
}

TEST_F(PrepareData, TheMemmapDatasetReadsTheOutput) {
  ASSERT_EQ(rc_, 0) << *output_;
  int64_t expected = 0;
  std::vector<int> first;
  for (int i = 0; fs::exists(shard("train", i)); ++i) {
    const auto ids = read_u16_npy(shard("train", i));
    if (i == 0) first = ids;
    expected += static_cast<int64_t>(ids.size()) / 16;
  }
  const auto ds = open_dataset(out() / "train", "*.npy", 15);
  EXPECT_EQ(ds->size(), expected);
  EXPECT_EQ(to_vector(ds->window(1)), std::vector<int64_t>(first.begin() + 16, first.begin() + 32));
}

TEST_F(PrepareData, AGivenTokenizerReproducesTheSameShards) {
  ASSERT_EQ(rc_, 0) << *output_;
  const fs::path out2 = *dir_ / "out2";
  std::string log;
  ASSERT_EQ(run_cli({"--input", corpus_->string(), "--output", out2.string(), "--tokenizer",
                     (out() / "tokenizer.model").string(), "--eval-fraction", "0.2", "--shard-tokens", "500"},
                    &log),
            0)
      << log;
  for (const char* file : {"train/tokens_000.npy", "train/tokens_001.npy", "eval/tokens_000.npy"}) {
    EXPECT_EQ(read_u16_npy(out() / file), read_u16_npy(out2 / file)) << file;
  }
  // Rerunning into a directory with shards needs --overwrite.
  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", out2.string(), "--tokenizer",
                     (out() / "tokenizer.model").string()},
                    &log),
            1);
  EXPECT_HAS(log, "already holds .npy shards");
  EXPECT_HAS(log, "--overwrite");
  // Input files may also follow the options without --input.
  EXPECT_EQ(run_cli({"--output", out2.string(), "--tokenizer", (out() / "tokenizer.model").string(), "--eval-fraction",
                     "0", "--overwrite", corpus_->string()},
                    &log),
            0)
      << log;
  EXPECT_FALSE(fs::exists(out2 / "eval" / "tokens_000.npy"));
}

TEST_F(PrepareData, JsonLinesDocumentsAreTheirTextField) {
  ASSERT_EQ(rc_, 0) << *output_;
  const fs::path jsonl = *dir_ / "corpus.jsonl";
  {
    std::ofstream out(jsonl);
    for (size_t i = 0; i < paragraphs_->size(); ++i) {
      out << nlohmann::json{{"id", i}, {"content", (*paragraphs_)[i]}, {"text", 7}}.dump() << "\n";
      if (i == 3) out << "   \n";  // a blank line is no document
    }
  }
  std::string log;
  ASSERT_EQ(prepare("jsonl", {jsonl.string()}, {"--text-field", "content"}, &log), 0) << log;
  const nlohmann::json meta = read_metadata(*dir_ / "jsonl");
  EXPECT_EQ(meta["documents"]["train"], 64);
  EXPECT_EQ(meta["documents"]["eval"], 16);
  EXPECT_EQ(meta["sources"][0]["format"], "jsonl");
  EXPECT_EQ(meta["text_field"], "content");
  EXPECT_EQ(meta["skipped_lines"], 0);
  const data::Tokenizer tok(model());
  std::vector<std::string> docs = decode_documents(*dir_ / "jsonl", "train", tok);
  for (const auto& d : decode_documents(*dir_ / "jsonl", "eval", tok)) docs.push_back(d);
  EXPECT_EQ(docs, *paragraphs_);
}

TEST_F(PrepareData, ABadJsonLineNamesFileAndLineOrIsSkippedAndCounted) {
  ASSERT_EQ(rc_, 0) << *output_;
  const fs::path jsonl = *dir_ / "bad.jsonl";
  std::ofstream(jsonl) << R"({"text": "Call me Ishmael."})"
                       << "\n"
                       << R"({"text": "Some years ago."})"
                       << "\n"
                       << R"({"text": "never mind how long)"
                       << "\n"  // line 3: not JSON
                       << R"({"text": "precisely."})"
                       << "\n"
                       << R"({"text": 5})"
                       << "\n"  // line 5: not a string
                       << R"(["text"])"
                       << "\n"  // line 6: not an object
                       << R"({"body": "x", "id": 1})"
                       << "\n"  // line 7: no field
                       << R"({"text": ""})"
                       << "\n"                                    // line 8: empty, no document
                       << R"({"text": "having little money."})";  // no newline at the end
  std::string log;
  EXPECT_EQ(prepare("bad", {jsonl.string()}, {"--threads", "3"}, &log), 1);
  EXPECT_HAS(log, "input '" + jsonl.string() + "' line 3: not valid JSON");
  EXPECT_HAS(log, "--skip-bad-lines");

  ASSERT_EQ(prepare("bad", {jsonl.string()}, {"--skip-bad-lines", "--eval-fraction", "0"}, &log), 0) << log;
  EXPECT_HAS(log, "line 5: field \"text\" is a number, not a string");
  EXPECT_HAS(log, "line 6: a JSON array, not an object");
  EXPECT_HAS(log, "line 7: no \"text\" field (it has \"body\", \"id\"; choose the field with --text-field)");
  EXPECT_HAS(log, "skipped     4 bad line(s), 1 empty document(s)");
  const nlohmann::json meta = read_metadata(*dir_ / "bad");
  EXPECT_EQ(meta["skipped_lines"], 4);
  EXPECT_EQ(meta["empty_documents"], 1);
  EXPECT_EQ(meta["sources"][0]["skipped_lines"], 4);
  EXPECT_EQ(meta["documents"]["train"], 4);
  const data::Tokenizer tok(model());
  EXPECT_EQ(decode_documents(*dir_ / "bad", "train", tok).back(), tok.decode(tok.encode("having little money.")))
      << "the last line, without a newline, is a document";
}

// Compressed copies made by the gzip and zstd tools (the zstd one named without a hint) give the same files.
TEST_F(PrepareData, CompressedInputsGiveTheSameTokensAsThePlainFile) {
  ASSERT_EQ(rc_, 0) << *output_;
  const fs::path gz = *dir_ / "corpus.txt.gz", zst = *dir_ / "corpus.data";
  ASSERT_EQ(run_command("gzip -9 -c '" + corpus_->string() + "' > '" + gz.string() + "'"), 0);
  ASSERT_EQ(run_command("zstd -q -19 -c '" + corpus_->string() + "' > '" + zst.string() + "'"), 0)
      << "the zstd tool (Debian zstd, scripts/setup.sh) makes the compressed input";
  std::string log;
  ASSERT_EQ(prepare("plain", {corpus_->string()}, {}, &log), 0) << log;
  const auto plain = read_outputs(*dir_ / "plain");
  ASSERT_GT(plain.size(), 4u);
  for (const auto& [input, compression] :
       {std::pair<fs::path, std::string>{gz, "gzip"}, std::pair<fs::path, std::string>{zst, "zstd"}}) {
    ASSERT_EQ(prepare(compression, {input.string()}, {}, &log), 0) << log;
    EXPECT_EQ(read_outputs(*dir_ / compression), plain) << compression;
    const nlohmann::json meta = read_metadata(*dir_ / compression);
    EXPECT_EQ(meta["sources"][0]["compression"], compression);
    EXPECT_EQ(meta["sources"][0]["bytes"], fs::file_size(input));
    EXPECT_EQ(meta["sources"][0]["text_bytes"], fs::file_size(*corpus_));
  }
}

// A gzip cut in half: an error naming the file and how far it was read, in the counting and the encoding
// pass; one cut before its first block decodes is refused when it is opened.
TEST_F(PrepareData, ATruncatedGzipIsAnErrorNamingTheFile) {
  ASSERT_EQ(rc_, 0) << *output_;
  fs::create_directories(*dir_ / "big");
  const fs::path big = write_corpus(*dir_ / "big", make_paragraphs(4000));
  const fs::path gz = *dir_ / "whole.gz", cut = *dir_ / "cut.gz", stub = *dir_ / "stub.gz";
  ASSERT_EQ(run_command("gzip -1 -c '" + big.string() + "' > '" + gz.string() + "'"), 0);
  ASSERT_GT(fs::file_size(gz), 128u << 10) << "half of it is more than the 64 KiB libarchive reads at once";
  for (const auto& [file, size] : {std::pair<fs::path, uintmax_t>{cut, fs::file_size(gz) / 2}, {stub, 100}}) {
    fs::copy_file(gz, file, fs::copy_options::overwrite_existing);
    fs::resize_file(file, size);
  }
  std::string log;
  for (const char* eval : {"0.2", "0"}) {
    EXPECT_EQ(prepare("cut", {cut.string()}, {"--eval-fraction", eval}, &log), 1);
    EXPECT_HAS(log, "input '" + cut.string() + "' (gzip) is damaged or truncated: reading stopped after ");
    EXPECT_HAS(log, " bytes of text): truncated gzip input");
  }
  EXPECT_EQ(prepare("cut", {stub.string()}, {}, &log), 1);
  EXPECT_HAS(log, "cannot read input '" + stub.string() + "': truncated gzip input");
}

// Chunks of 200 bytes (a document or two) read 100 bytes at a time (lines span reads) through 1 or 3
// threads: the same files as the one-chunk run of the fixture's corpus.
TEST_F(PrepareData, OutputIsTheSameForAnyThreadCountAndChunkSize) {
  ASSERT_EQ(rc_, 0) << *output_;
  std::string log;
  ASSERT_EQ(prepare("reference", {corpus_->string()}, {"--threads", "1"}, &log), 0) << log;
  const auto reference = read_outputs(*dir_ / "reference");
  ASSERT_GT(fs::file_size(*corpus_), 40u * 200);  // many chunks
  for (int threads : {1, 3}) {
    data::PrepareOptions o;
    o.inputs = {*corpus_};
    o.output = *dir_ / fmt::format("threads{}", threads);
    o.tokenizer = model();
    o.eval_fraction = 0.2;
    o.shard_tokens = 500;
    o.threads = threads;
    o.chunk_bytes = 200;
    o.read_bytes = 100;
    o.progress = false;
    const data::PrepareResult r = data::prepare_data(o);
    EXPECT_EQ(r.threads, threads);
    EXPECT_EQ(read_outputs(o.output), reference) << threads << " threads";
    std::ifstream a(o.output / "metadata.json"), b(*dir_ / "reference" / "metadata.json");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
  }
}

// numpy reads the shards and document indexes (tests/oracles/doc_index_check.py): full shards, documents
// starting after each EOS, in the fixture's run and in runs of 7-token and 2-token shards (documents span
// several shards; more than 1000 shards get 4-digit names).
TEST_F(PrepareData, ShardsHoldShardTokensAndTheDocumentIndexPointsAtEachDocument) {
  ASSERT_EQ(rc_, 0) << *output_;
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with numpy reads the document index (scripts/setup.sh)";
  std::string got, log;
  ASSERT_EQ(run_oracle("doc_index_check.py", {out().string()}, &got), 0) << got;
  const nlohmann::json meta = read_metadata(out());
  for (const std::string split : {"train", "eval"}) {
    EXPECT_HAS(got, fmt::format("{} shards={} tokens={} documents={} first=0,", split, meta["shards"][split].size(),
                                meta["tokens"][split].get<int64_t>(), meta["documents"][split].get<int64_t>()));
  }
  ASSERT_EQ(prepare("small_shards", {corpus_->string()}, {"--shard-tokens", "7", "--documents", "lines"}, &log), 0)
      << log;
  ASSERT_EQ(run_oracle("doc_index_check.py", {(*dir_ / "small_shards").string()}, &got), 0) << got;
  bool a_shard_without_a_start = false;
  const nlohmann::json small = read_metadata(*dir_ / "small_shards");
  for (const auto& name : small["document_index"]["train"]) {
    a_shard_without_a_start |= fs::file_size(*dir_ / "small_shards" / name.get<std::string>()) == 128;
  }
  EXPECT_TRUE(a_shard_without_a_start) << "some line is longer than 7 tokens, so a document spans a whole shard";

  ASSERT_EQ(prepare("tiny_shards", {corpus_->string()}, {"--shard-tokens", "2", "--eval-fraction", "0"}, &log), 0)
      << log;
  const nlohmann::json tiny = read_metadata(*dir_ / "tiny_shards");
  ASSERT_GT(tiny["shards"]["train"].size(), 1000u);
  EXPECT_EQ(tiny["shards"]["train"][0], "train/tokens_0000.npy");
  EXPECT_EQ(tiny["document_index"]["train"][1000], "doc_index/train/tokens_1000.docs.npy");
  ASSERT_EQ(run_oracle("doc_index_check.py", {(*dir_ / "tiny_shards").string()}, &got), 0) << got;
  EXPECT_HAS(got, fmt::format("train shards={} tokens={}", tiny["shards"]["train"].size(),
                              tiny["tokens"]["train"].get<int64_t>()));
}

TEST_F(PrepareData, ErrorsAreClear) {
  std::string log;
  EXPECT_EQ(run_cli({"--input", (*dir_ / "missing.txt").string(), "--output", (*dir_ / "e1").string(),
                     "--train-tokenizer", "--vocab-size", "300"},
                    &log),
            1);
  EXPECT_HAS(log, "input '" + (*dir_ / "missing.txt").string() + "' does not exist");

  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "e2").string()}, &log), 2);
  EXPECT_HAS(log, "exactly one of --train-tokenizer");

  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "e3").string(), "--train-tokenizer"}, &log), 2);
  EXPECT_HAS(log, "needs --vocab-size");

  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "e4").string(), "--train-tokenizer",
                     "--vocab-size", "20000"},
                    &log),
            1);
  EXPECT_HAS(log, "lower --vocab-size");

  std::ofstream(*dir_ / "a_file") << "x";
  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "a_file" / "sub").string(), "--tokenizer",
                     (out() / "tokenizer.model").string()},
                    &log),
            1);
  EXPECT_HAS(log, "output directory '" + (*dir_ / "a_file" / "sub").string() + "' cannot be created");

  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "e5").string(), "--tokenizer",
                     (*dir_ / "nope.model").string()},
                    &log),
            1);
  EXPECT_HAS(log, "'" + (*dir_ / "nope.model").string() + "' does not exist");

  std::ofstream(*dir_ / "e6.jsonl") << R"({"text": "x"})"
                                    << "\n";
  EXPECT_EQ(run_cli({"--input", (*dir_ / "e6.jsonl").string(), "--output", (*dir_ / "e6").string(), "--train-tokenizer",
                     "--vocab-size", "300"},
                    &log),
            2);
  EXPECT_HAS(log, "--train-tokenizer reads plain uncompressed text, and input '" + (*dir_ / "e6.jsonl").string() +
                      "' is JSON Lines");
  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "e7").string(), "--tokenizer",
                     (out() / "tokenizer.model").string(), "--format", "csv"},
                    &log),
            2);
  EXPECT_HAS(log, "--format 'csv' is not supported; use auto, text or jsonl");
  EXPECT_EQ(run_cli({"--input", corpus_->string(), "--output", (*dir_ / "e8").string(), "--tokenizer",
                     (out() / "tokenizer.model").string(), "--threads=-2"},
                    &log),
            2);
  EXPECT_HAS(log, "--threads -2 must be >= 0");

  EXPECT_EQ(run_cli({"--bogus"}, &log), 2);
  EXPECT_EQ(run_cli({"--help"}, &log), 0);
  EXPECT_HAS(log, "Example:");
  EXPECT_HAS(log, "--vocab-size");
  for (const char* flag : {"--format", "--text-field", "--skip-bad-lines", "--threads"}) EXPECT_HAS(log, flag);
}

// In a log (stderr not a terminal) a line per 5% step: bytes of the files, MB/s of text and tokens so far.
TEST(PrepareProgress, ReportsBytesTextRateAndTokensInFivePercentSteps) {
  testing::internal::CaptureStderr();
  {
    data::Progress progress("encoding", 200'000'000, true);
    progress.update(10'000'000, 30'000'000, 7'000'000);  // 5%
    progress.update(12'000'000, 35'000'000, 8'000'000);  // still 5%: no line
    progress.update(100'000'000, 300'000'000, 70'000'000);
    progress.finish();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  if (::isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal: the report is one \\r line";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 3) << err;
  EXPECT_HAS(err, "encoding:   5.0% (10.0 / 200.0 MB), ");
  EXPECT_HAS(err, " MB/s of text, 7000000 tokens\n");
  EXPECT_HAS(err, "encoding:  50.0% (100.0 / 200.0 MB), ");
  EXPECT_HAS(err, " MB/s of text, 70000000 tokens\n");
  EXPECT_HAS(err, "encoding: 100.0% (200.0 / 200.0 MB)");
}

// Found by the tokenizer_model fuzz target: SentencePiece's Darts throws on a model with an empty
// piece, and the exception crossed the shim's C interface (the process aborted).
TEST(TokenizerModel, AModelWithAnEmptyPieceIsAnErrorNamingTheFileNotAnAbort) {
  const fs::path model =
      fs::path(KFORGE_SOURCE_DIR) / "fuzz/regressions/tokenizer_model/empty_piece_darts_exception.model";
  try {
    data::Tokenizer tok(model);
    ADD_FAILURE() << "a damaged model loaded";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find(model.string()), std::string::npos) << e.what();
  }
}

TEST(NpyTokenWriter, DtypeFollowsTheVocabularyAndNumpyReadsUint32) {
  EXPECT_EQ(data::dtype_for_vocab(300), data::TokenDtype::uint16);
  EXPECT_EQ(data::dtype_for_vocab(65536), data::TokenDtype::uint16);
  EXPECT_EQ(data::dtype_for_vocab(65537), data::TokenDtype::uint32);
  const fs::path dir = temp_dir("npy_writer");
  data::write_npy_tokens(dir / "a.npy", data::TokenDtype::uint32, {0, 70000, 2147483647, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(fs::file_size(dir / "a.npy"), 128u + 9 * 4);
  const auto ds = open_dataset(dir, "*.npy", 8);
  EXPECT_EQ(to_vector(ds->window(0)), (std::vector<int64_t>{0, 70000, 2147483647, 5, 6, 7, 8, 9, 10}));
  {
    data::NpyTokenWriter w(dir / "b.npy", data::TokenDtype::uint16);
    EXPECT_THROW(w.append({65536}), sdk::Error);
    EXPECT_THROW(w.append({-1}), sdk::Error);
  }
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the .npy reader (scripts/setup.sh)";
  std::string got;
  ASSERT_EQ(run_oracle("data_npy_check.py", {(dir / "a.npy").string()}, &got), 0) << got;
  EXPECT_HAS(got, "dtype=uint32 len=9 sum=2147553692 head=0,70000,2147483647,5,6,7,8,9");
}

}  // namespace
}  // namespace kforge::test
