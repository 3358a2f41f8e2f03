// tiktoken rank files against gpt-tokenizer's TestPlans.txt: every golden case, id for id.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>

#include "core/data/fetched_tokenizers.h"
#include "data/tokenizer.h"

namespace kforge {
namespace {

struct GoldenCase {
  std::string encoding, sample, expected;
};

/// TestPlans.txt: blocks of `EncodingName: X`, `Sample: text`, `Encoded: [ids]` (one line each), blank-separated.
std::vector<GoldenCase> golden_cases() {
  std::ifstream in(test::fetched_tokenizer_file("TestPlans.txt"));
  std::vector<GoldenCase> cases;
  std::string line;
  GoldenCase current;
  while (std::getline(in, line)) {
    if (line.starts_with("EncodingName: ")) current.encoding = line.substr(14);
    if (line.starts_with("Sample: ")) current.sample = line.substr(8);
    if (line.starts_with("Encoded: ")) {
      current.expected = line.substr(9);
      cases.push_back(current);
    }
  }
  return cases;
}

std::string id_list(const std::vector<int>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

TEST(TiktokenGolden, EveryCaseOfTestPlansMatchesIdForIdAndDecodesBack) {
  std::map<std::string, std::unique_ptr<data::Tokenizer>> tokenizers;
  for (const char* name : {"r50k_base", "p50k_base", "cl100k_base", "o200k_base"}) {
    tokenizers[name] = std::make_unique<data::Tokenizer>(test::fetched_tokenizer_file(std::string(name) + ".tiktoken"));
    EXPECT_EQ(tokenizers[name]->kind(), "tiktoken");
  }
  // p50k_edit is p50k_base plus edit-mode special tokens that never come from text: the same ranks and regex.
  tokenizers["p50k_edit"] = std::make_unique<data::Tokenizer>(test::fetched_tokenizer_file("p50k_base.tiktoken"));
  const auto cases = golden_cases();
  ASSERT_EQ(cases.size(), 313u) << "TestPlans.txt of gpt-tokenizer@4.0.0 has 313 cases";
  std::map<std::string, int> per_encoding;
  for (const auto& c : cases) {
    ASSERT_TRUE(tokenizers.count(c.encoding)) << "unknown encoding " << c.encoding;
    const auto& tokenizer = *tokenizers[c.encoding];
    const auto ids = tokenizer.encode(c.sample);
    EXPECT_EQ(id_list(ids), c.expected) << c.encoding << ": " << c.sample;
    EXPECT_EQ(tokenizer.decode(ids), c.sample) << c.encoding;
    ++per_encoding[c.encoding];
  }
  EXPECT_EQ(per_encoding,
            (std::map<std::string, int>{
                {"cl100k_base", 64}, {"o200k_base", 57}, {"p50k_base", 64}, {"p50k_edit", 64}, {"r50k_base", 64}}));
}

TEST(TiktokenGolden, EndOfTextIsTheEosAtEachEncodingsIdAndOrdinaryInText) {
  const std::map<std::string, std::pair<int, int>> expected{{"r50k_base", {50256, 50257}},
                                                            {"p50k_base", {50256, 50281}},
                                                            {"cl100k_base", {100257, 100277}},
                                                            {"o200k_base", {199999, 200019}}};
  for (const auto& [name, ids] : expected) {
    const data::Tokenizer tokenizer(test::fetched_tokenizer_file(name + ".tiktoken"));
    EXPECT_EQ(tokenizer.eos_id(), ids.first) << name;
    EXPECT_EQ(tokenizer.vocab_size(), ids.second) << name;
    EXPECT_EQ(tokenizer.bos_id(), -1) << name;
    EXPECT_EQ(tokenizer.unk_id(), -1) << name;
    EXPECT_EQ(tokenizer.pad_id(), -1) << name;
    EXPECT_EQ(tokenizer.decode(std::vector<int>{ids.first}), "<|endoftext|>") << name;
    const auto in_text = tokenizer.encode("a<|endoftext|>b");
    EXPECT_EQ(std::count(in_text.begin(), in_text.end(), ids.first), 0) << name << ": text is encoded as ordinary text";
    EXPECT_NE(tokenizer.describe().find(name), std::string::npos) << tokenizer.describe();
  }
}

}  // namespace
}  // namespace kforge
