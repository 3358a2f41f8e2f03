// decode(encode(x)) == x for every byte-level tokenizer kind, on Moby-Dick, adversarial text and bytes that are not
// UTF-8; concurrent encoding gives the single-threaded ids; a SentencePiece model still loads as one.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "core/data/fetched_tokenizers.h"
#include "data/tokenizer.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"

namespace kforge {
namespace {

const std::vector<std::string>& byte_level_files() {
  static const std::vector<std::string> files{"r50k_base.tiktoken",  "p50k_base.tiktoken",   "cl100k_base.tiktoken",
                                              "o200k_base.tiktoken", "qwen3/tokenizer.json", "llama3/tokenizer.json"};
  return files;
}

/// What an NFC-normalizing tokenizer gives back: the texts NFC changes, written out composed by hand.
std::string nfc_of(const std::string& text) {
  static const std::map<std::string, std::string> composed{
      {"e\u0301 cafe\u0301 A\u030A n\u0303 o\u0308\u0304 \u1100\u1161\u11A8",
       "\u00e9 caf\u00e9 \u00c5 \u00f1 \u022b \uac01"},
      {"\uac00\u11a7 \uac00\u11a8", "\uac00\u11a7 \uac01"},
      {"e\xcc\x81 then \xff", "\xc3\xa9 then \xff"}};
  const auto it = composed.find(text);
  return it == composed.end() ? text : it->second;
}

TEST(TokenizerRoundTrip, DecodeOfEncodeGivesTheTextBackByteForByte) {
  auto texts = test::adversarial_texts();
  for (const auto& t : test::invalid_utf8_texts()) texts.push_back(t);
  for (const auto& t : test::moby_dick_paragraphs()) texts.push_back(t);
  texts.push_back(test::moby_dick());
  texts.push_back(std::string(100000, ' ') + "x" + std::string(50000, '\n'));  // long runs merge in O(n log n)
  for (const auto& file : byte_level_files()) {
    const data::Tokenizer tokenizer(test::fetched_tokenizer_file(file));
    const bool nfc = file == "qwen3/tokenizer.json";  // Llama 3's has no normalizer
    for (const auto& text : texts) {
      const auto ids = tokenizer.encode(text);
      EXPECT_EQ(tokenizer.decode(ids), nfc ? nfc_of(text) : text) << file << ": " << text.substr(0, 200);
    }
  }
}

TEST(TokenizerRoundTrip, ConcurrentEncodesGiveTheSingleThreadedIds) {
  const auto paragraphs = test::moby_dick_paragraphs();
  for (const auto& file : {"cl100k_base.tiktoken", "qwen3/tokenizer.json"}) {
    const data::Tokenizer tokenizer(test::fetched_tokenizer_file(file));
    std::vector<std::vector<int>> expected;
    for (const auto& p : paragraphs) expected.push_back(tokenizer.encode(p));
    std::vector<std::vector<std::vector<int>>> got(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < got.size(); ++t) {
      threads.emplace_back([&, t] {
        for (int repeat = 0; repeat < 3; ++repeat) {
          for (size_t i = 0; i < paragraphs.size(); ++i)
            got[t].push_back(tokenizer.encode(paragraphs[(i + t) % paragraphs.size()]));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (size_t t = 0; t < got.size(); ++t) {
      for (size_t k = 0; k < got[t].size(); ++k) {
        EXPECT_EQ(got[t][k], expected[(k % paragraphs.size() + t) % paragraphs.size()]) << file << " thread " << t;
      }
    }
  }
}

TEST(TokenizerRoundTrip, ASentencePieceModelStillLoadsAsSentencePiece) {
  const data::Tokenizer tokenizer(test::tiny_tokenizer(test::temp_dir("spm_kind")));
  EXPECT_EQ(tokenizer.kind(), "sentencepiece");
  EXPECT_NE(tokenizer.describe().find("sentencepiece: vocabulary 60"), std::string::npos) << tokenizer.describe();
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("the lazy dog")), "the lazy dog");
}

}  // namespace
}  // namespace kforge
