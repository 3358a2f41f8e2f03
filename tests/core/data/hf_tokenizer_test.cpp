// Hugging Face tokenizer.json (byte-level BPE): Qwen3's and Llama 3's against the transformers.js port under Node
// (tests/oracles/lenml_tokenizer_ids.mjs), both merge formats, ignore_merges, added tokens, the special ids, NFC.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/data/fetched_tokenizers.h"
#include "data/byte_level.h"
#include "data/nfc.h"
#include "data/tokenizer.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

/// The reference ids of `texts` from @lenml/tokenizer-`name` (encode(text, {add_special_tokens: false})).
std::vector<std::vector<int>> reference_ids(const std::string& name, const std::vector<std::string>& texts) {
  const fs::path dir = test::temp_dir(name + "_oracle");
  std::ofstream(dir / "texts.json") << json(texts).dump();
  const std::string command = "node " + std::string(KFORGE_SOURCE_DIR) + "/tests/oracles/lenml_tokenizer_ids.mjs '" +
                              test::fetched_tokenizer_file("node_modules").parent_path().string() + "' " + name +
                              " < '" + (dir / "texts.json").string() + "' > '" + (dir / "ids.json").string() + "'";
  std::string output;
  if (test::run_command(command, &output) != 0) {
    throw std::runtime_error("the " + name + " oracle failed (node from scripts/setup.sh's npm, the package from " +
                             "scripts/fetch_tokenizers.sh): " + command + "\n" + output);
  }
  return json::parse(test::read_file(dir / "ids.json")).get<std::vector<std::vector<int>>>();
}

/// Moby-Dick's paragraphs and the adversarial texts: the ids of the tokenizer.json of `name` against the reference.
void expect_reference_ids(const std::string& name) {
  const data::Tokenizer tokenizer(test::fetched_tokenizer_file(name + "/tokenizer.json"));
  EXPECT_EQ(tokenizer.kind(), "hf-bpe");
  auto texts = test::moby_dick_paragraphs();
  const auto adversarial = test::adversarial_texts();
  texts.insert(texts.end(), adversarial.begin(), adversarial.end());
  const auto expected = reference_ids(name, texts);
  ASSERT_EQ(expected.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(tokenizer.encode(texts[i]), expected[i]) << name << ": " << texts[i];
}

TEST(HfTokenizer, Qwen3MatchesTheTransformersJsPortOnMobyDickAndAdversarialText) {
  expect_reference_ids("qwen3");  // merges as pairs, NFC, added tokens <|im_start|> ... cut out of the text
  // The sample of ../shared/docs/data-sources.md, as a fixed point independent of Node.
  const data::Tokenizer tokenizer(test::fetched_tokenizer_file("qwen3/tokenizer.json"));
  EXPECT_EQ(
      tokenizer.encode("Call me Ishmael. Some years ago—never mind how long precisely"),
      (std::vector<int>{7220, 752, 56604, 1728, 301, 13, 4329, 1635, 4134, 2293, 36493, 3971, 1246, 1293, 23638}));
}

TEST(HfTokenizer, Llama3MatchesTheTransformersJsPortOnMobyDickAndAdversarialText) {
  expect_reference_ids("llama3");  // merges as "a b" strings, ignore_merges, no normalizer, 256 added tokens
  const data::Tokenizer tokenizer(test::fetched_tokenizer_file("llama3/tokenizer.json"));
  EXPECT_EQ(tokenizer.bos_id(), 128000);  // tokenizer_config.json: <|begin_of_text|>
  EXPECT_EQ(tokenizer.eos_id(), 128001);  // <|end_of_text|>
  EXPECT_EQ(tokenizer.pad_id(), -1);
  EXPECT_EQ(tokenizer.vocab_size(), 128256);
}

TEST(HfTokenizer, Qwen3SpecialIdsComeFromTheTokenizerConfigNextToIt) {
  const data::Tokenizer tokenizer(test::fetched_tokenizer_file("qwen3/tokenizer.json"));
  EXPECT_EQ(tokenizer.eos_id(), 151645);  // tokenizer_config.json: eos_token <|im_end|>
  EXPECT_EQ(tokenizer.pad_id(), 151643);  // pad_token <|endoftext|>
  EXPECT_EQ(tokenizer.bos_id(), -1);      // bos_token null, and no <|begin_of_text|> or <s> among the added tokens
  EXPECT_EQ(tokenizer.unk_id(), -1);
  EXPECT_EQ(tokenizer.vocab_size(), 151669);
  EXPECT_EQ(tokenizer.encode("<|im_start|>"), std::vector<int>{151644});
  EXPECT_EQ(tokenizer.decode(std::vector<int>{151644, 151645}), "<|im_start|><|im_end|>");
}

TEST(HfTokenizer, MergesAsStringsGiveTheSameIdsAsMergesAsPairs) {
  const fs::path source = test::fetched_tokenizer_file("qwen3/tokenizer.json");
  json file = json::parse(test::read_file(source));
  ASSERT_TRUE(file["model"]["merges"][0].is_array()) << "Qwen3 lists its merges as pairs";
  for (auto& merge : file["model"]["merges"]) merge = merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  const fs::path dir = test::temp_dir("qwen3_string_merges");
  std::ofstream(dir / "tokenizer.json") << file.dump();
  const data::Tokenizer pairs(source), strings(dir / "tokenizer.json");
  for (const auto& text : test::moby_dick_paragraphs()) EXPECT_EQ(strings.encode(text), pairs.encode(text));
  for (const auto& text : test::adversarial_texts()) EXPECT_EQ(strings.encode(text), pairs.encode(text)) << text;
}

/// A small GPT-2 style tokenizer.json: ids 0-255 the bytes, then he, ll, hell, hello, world and <|endoftext|>.
json tiny_byte_level(const json& merges, bool ignore_merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[data::byte_to_unicode(static_cast<uint8_t>(b))] = b;
  int next = 256;
  for (const char* token : {"he", "ll", "hell", "hello", "world"}) vocab[token] = next++;
  return {{"version", "1.0"},
          {"added_tokens", json::array({{{"id", 261}, {"content", "<|endoftext|>"}, {"special", true}}})},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"ignore_merges", ignore_merges}}}};
}

data::Tokenizer write_and_load(const json& file, const std::string& label, const json& config = nullptr) {
  const fs::path dir = test::temp_dir(label);
  std::ofstream(dir / "tokenizer.json") << file.dump();
  if (!config.is_null()) std::ofstream(dir / "tokenizer_config.json") << config.dump();
  return data::Tokenizer(dir / "tokenizer.json");
}

TEST(HfTokenizer, ByteLevelMergesIgnoreMergesAndAddedTokensOnATinyVocabulary) {
  const json strings = json::array({"h e", "l l", "he ll", "hell o"});
  const json pairs = json::array({{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}});
  const auto by_strings = write_and_load(tiny_byte_level(strings, false), "tiny_strings");
  const auto by_pairs = write_and_load(tiny_byte_level(pairs, false), "tiny_pairs");
  const std::vector<int> hello_twice{259, ' ', 259, 261, 'w', 'o', 'r', 'l', 'd'};  // ' ' is Ġ, id 32: no Ġh merge
  EXPECT_EQ(by_strings.encode("hello hello<|endoftext|>world"), hello_twice);
  EXPECT_EQ(by_pairs.encode("hello hello<|endoftext|>world"), hello_twice);
  EXPECT_EQ(by_pairs.eos_id(), 261);  // no tokenizer_config.json: the added <|endoftext|>
  EXPECT_EQ(by_pairs.decode(hello_twice), "hello hello<|endoftext|>world");
  // ignore_merges: a pre-token that is in the vocabulary maps to it even without merges leading there.
  const auto ignoring = write_and_load(tiny_byte_level(strings, true), "tiny_ignore_merges");
  EXPECT_EQ(ignoring.encode("world hello"), (std::vector<int>{260, ' ', 259}));
  const auto config = json{{"eos_token", {{"content", "world"}}}, {"bos_token", "he"}, {"pad_token", nullptr}};
  const auto configured = write_and_load(tiny_byte_level(strings, false), "tiny_config", config);
  EXPECT_EQ(configured.eos_id(), 260);
  EXPECT_EQ(configured.bos_id(), 256);
  EXPECT_EQ(configured.pad_id(), -1);
}

/// UTF-8 of one code point.
std::string utf8(char32_t c) {
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  if (c < 0x800) return {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
  if (c < 0x10000) {
    return {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
            static_cast<char>(0x80 | (c & 0x3F))};
  }
  return {static_cast<char>(0xF0 | (c >> 18)), static_cast<char>(0x80 | ((c >> 12) & 0x3F)),
          static_cast<char>(0x80 | ((c >> 6) & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
}

TEST(HfTokenizer, TheNfcQuickCheckSkipsOnlyTextsNfcLeavesAlone) {
  // Every code point the quick check passes is its own NFC, alone and after starters that compose with many marks
  // or jamo (a Hangul LV syllable among them).
  const std::vector<std::string> starters{"a", "e", "o", "A", "\u03b1", "\u0915", "\u0b47", "\uac00", "\u1100"};
  size_t skipped = 0;
  for (char32_t c = 0x300; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const std::string alone = utf8(c);
    if (data::may_change_under_nfc(alone)) continue;
    ++skipped;
    ASSERT_EQ(data::nfc_normalize(alone), alone) << "U+" << std::hex << static_cast<uint32_t>(c);
    for (const auto& starter : starters) {
      ASSERT_EQ(data::nfc_normalize(starter + alone), starter + alone) << "U+" << std::hex << static_cast<uint32_t>(c);
    }
  }
  EXPECT_GT(skipped, 1000000u);  // nearly every code point: the check is worth having
  EXPECT_TRUE(data::may_change_under_nfc("cafe\u0301"));
  EXPECT_TRUE(data::may_change_under_nfc("\u1100\u1161"));  // jamo compose into a syllable
  EXPECT_TRUE(data::may_change_under_nfc("bad \xff byte"));
  EXPECT_FALSE(data::may_change_under_nfc("Call me Ishmael \u2014 \u201cquoted\u201d \u65e5\u672c"));
  EXPECT_EQ(data::nfc_normalize(std::string("e\xcc\x81\xff\0e\xcc\x81", 8)), std::string("\xc3\xa9\xff\0\xc3\xa9", 6));
}

}  // namespace
}  // namespace kforge
