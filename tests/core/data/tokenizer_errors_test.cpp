// Malformed and unsupported tokenizer files: each error names the file and where in it (JSON path, line).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/data/fetched_tokenizers.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The message of the sdk::Error loading `path` throws; fails the test when it loads.
std::string load_error(const fs::path& path) {
  try {
    data::Tokenizer tokenizer(path);
  } catch (const sdk::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " loaded";
  return "";
}

fs::path write(const std::string& label, const std::string& name, const std::string& content) {
  const fs::path path = test::temp_dir(label) / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

json bpe_skeleton() {
  return {{"model", {{"type", "BPE"}, {"vocab", json::object()}, {"merges", json::array()}}},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}}}};
}

TEST(TokenizerErrors, ATokenizerJsonWithAnotherModelTypeIsRefusedNamingFileKeyAndValue) {
  for (const char* type : {"WordPiece", "Unigram"}) {
    json file = bpe_skeleton();
    file["model"]["type"] = type;
    const auto path = write("tokenizer_model_type", "tokenizer.json", file.dump());
    const std::string message = load_error(path);
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("model.type = \"") + type + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("BPE"), std::string::npos) << message;
  }
}

TEST(TokenizerErrors, UnsupportedNormalizerPreTokenizerAndMergeAreRefusedNamingTheJsonPath) {
  json nfkc = bpe_skeleton();
  nfkc["normalizer"] = {{"type", "NFKC"}};
  EXPECT_NE(load_error(write("tokenizer_nfkc", "tokenizer.json", nfkc.dump())).find("normalizer = {\"type\":\"NFKC\"}"),
            std::string::npos);
  json metaspace = bpe_skeleton();
  metaspace["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Metaspace"}}}}};
  EXPECT_NE(load_error(write("tokenizer_metaspace", "tokenizer.json", metaspace.dump()))
                .find("pre_tokenizer.pretokenizers[0] = {\"type\":\"Metaspace\"}"),
            std::string::npos);
  json bad_merge = bpe_skeleton();
  bad_merge["model"]["merges"] = {"a b c"};
  EXPECT_NE(
      load_error(write("tokenizer_bad_merge", "tokenizer.json", bad_merge.dump())).find("model.merges[0] = \"a b c\""),
      std::string::npos);
}

TEST(TokenizerErrors, ATruncatedTokenizerJsonIsRefusedNamingTheFile) {
  const std::string whole = test::read_file(test::fetched_tokenizer_file("qwen3/tokenizer.json"));
  const auto path = write("tokenizer_truncated", "tokenizer.json", whole.substr(0, whole.size() / 2));
  const std::string message = load_error(path);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
}

TEST(TokenizerErrors, ABadTiktokenLineIsRefusedNamingFileAndLine) {
  const std::string whole = test::read_file(test::fetched_tokenizer_file("r50k_base.tiktoken"));
  size_t ten_lines = 0;
  for (int i = 0; i < 10; ++i) ten_lines = whole.find('\n', ten_lines) + 1;
  const auto path = write("tiktoken_bad_line", "r50k_base.tiktoken",
                          whole.substr(0, ten_lines) + "not*base64 10\n" + whole.substr(ten_lines));
  const std::string message = load_error(path);
  EXPECT_NE(message.find(path.string() + "' line 11"), std::string::npos) << message;
  // A file that is well formed but none of the four kforge knows: its regex and special tokens are unknown.
  const auto unknown = write("tiktoken_unknown", "mine.tiktoken", whole.substr(0, ten_lines));
  EXPECT_NE(load_error(unknown).find("has 10 ranks"), std::string::npos);
}

TEST(TokenizerErrors, AFieldOfTheWrongTypeIsRefusedNamingItsJsonPath) {
  // Found by fuzz_hf_tokenizer_json: nlohmann's value() threw its own type_error, which escaped the loader.
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"pre_tokenizer", {{"type", "ByteLevel"}, {"use_regex", {{"a", 1}}}}}}, "pre_tokenizer.use_regex = {\"a\":1}"},
      {{{"pre_tokenizer", {{"type", 7}}}}, "pre_tokenizer.type = 7"},
      {{{"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", "ByteLevel"}}}},
       "pre_tokenizer.pretokenizers = \"ByteLevel\""},
      {{{"normalizer", 5}}, "normalizer = 5"},
      {{{"decoder", {{"type", true}}}}, "decoder.type = true"},
      {{{"added_tokens", {{"id", 3}}}}, "added_tokens = {\"id\":3}"},
      {{{"added_tokens", {{{"id", 3}, {"content", "x"}, {"lstrip", "yes"}}}}}, "added_tokens[0].lstrip = \"yes\""},
      {{{"model", {{"type", "BPE"}, {"vocab", json::object()}, {"merges", json::array()}, {"ignore_merges", 1}}}},
       "model.ignore_merges = 1"},
  };
  for (const auto& [patch, expected] : cases) {
    json file = bpe_skeleton();
    file.merge_patch(patch);
    const auto path = write("tokenizer_wrong_type", "tokenizer.json", file.dump());
    test::expect_has(load_error(path), {path.string(), expected + " is not supported"});
  }
}

TEST(TokenizerErrors, AVocabIdPastTheVocabIsRefusedNamingTheTokenNotAllocated) {
  // The highest id sized the token table: up to 2^30 was accepted, 32 GiB (fuzz_hf_tokenizer_json's harness aborts
  // on allocations over 4 GiB). This id asks for 1.6 GB before the fix.
  json file = bpe_skeleton();
  file["model"]["vocab"] = {{"a", 0}, {"b", 50000000}};
  const auto path = write("tokenizer_vocab_id", "tokenizer.json", file.dump());
  test::expect_has(load_error(path), {path.string(), "model.vocab[\"b\"] = 50000000 is not supported",
                                      "an id from 0 to 1, one per token of the 2-token vocab"});
}

TEST(TokenizerErrors, ATiktokenRankPastEveryKnownEncodingIsRefusedNamingTheLineNotAllocated) {
  // Found by fuzz_tiktoken_file: the rank sized the token table, so one short line asked for terabytes.
  const auto path = write("tiktoken_huge_rank", "mine.tiktoken", "IQ== 0\nIg== 99999999999999\n");
  test::expect_has(load_error(path), {path.string() + "' line 2: rank 99999999999999 is past every encoding",
                                      "o200k_base, has 199998 ranks"});
}

}  // namespace
}  // namespace kforge
