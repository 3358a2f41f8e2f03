// tiktoken rank files: base64 decoding, validation, and the table of the four known encodings.
#include "data/tiktoken_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <optional>

#include "data/bpe_tokenizer.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

struct TiktokenEncoding {
  const char* name;
  size_t ranks;
  const char* pattern;
  std::vector<AddedToken> specials;  // specials.front() is the eos
};

// The patterns are tiktoken's (openai_public.py), with Rust's end of text `$` written `\z` for PCRE2.
const std::vector<TiktokenEncoding>& tiktoken_encodings() {
  static const std::vector<TiktokenEncoding> encodings{
      {"r50k_base", 50256, kGpt2Pattern.data(), {{"<|endoftext|>", 50256}}},
      {"p50k_base", 50280, kGpt2Pattern.data(), {{"<|endoftext|>", 50256}}},
      {"cl100k_base",
       100256,
       R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\z|\s*[\r\n]|\s+(?!\S)|\s)",
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}}},
      {"o200k_base",
       199998,
       R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
       R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
       R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}},
  };
  return encodings;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && text[text.size() - 1 - padding] == '=') ++padding;
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const int v = base64_value(text[i]);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out += {static_cast<char>(bits >> 16), static_cast<char>(bits >> 8), static_cast<char>(bits)};
      bits = 0;
      count = 0;
    }
  }
  if (count == 2) out += static_cast<char>(bits >> 4);
  if (count == 3) out += {static_cast<char>(bits >> 10), static_cast<char>(bits >> 2)};
  return out;
}

struct TiktokenRankLine {
  std::string token;
  size_t rank;
};

std::optional<TiktokenRankLine> parse_rank_line(std::string_view line) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto token = base64_decode(line.substr(0, space));
  const auto digits = line.substr(space + 1);
  size_t rank = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  if (!token || digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return TiktokenRankLine{std::move(*token), rank};
}

}  // namespace

bool looks_like_tiktoken_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  return std::getline(in, line) && parse_rank_line(line).has_value();
}

std::unique_ptr<TokenizerBackend> load_tiktoken_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sdk::Error(fmt::format("tokenizer '{}': cannot be read", path.string()));
  const auto& known = tiktoken_encodings();
  const TiktokenEncoding& largest = *std::max_element(
      known.begin(), known.end(), [](const TiktokenEncoding& a, const TiktokenEncoding& b) { return a.ranks < b.ranks; });
  std::vector<std::string> tokens;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    auto parsed = parse_rank_line(line);
    if (!parsed) {
      throw sdk::Error(fmt::format("tiktoken file '{}' line {}: '{}' is not `base64(token) rank`", path.string(),
                                   number, line.substr(0, 80)));
    }
    if (parsed->rank >= largest.ranks) {  // a rank past every known encoding's: no table of it is ever allocated
      throw sdk::Error(fmt::format("tiktoken file '{}' line {}: rank {} is past every encoding kforge knows (the "
                                   "largest, {}, has {} ranks)",
                                   path.string(), number, parsed->rank, largest.name, largest.ranks));
    }
    if (parsed->rank >= tokens.size()) tokens.resize(parsed->rank + 1);
    if (!tokens[parsed->rank].empty() || parsed->token.empty()) {
      throw sdk::Error(fmt::format("tiktoken file '{}' line {}: rank {} {}", path.string(), number, parsed->rank,
                                   parsed->token.empty() ? "has an empty token" : "appears twice"));
    }
    tokens[parsed->rank] = std::move(parsed->token);
  }
  const auto ranks =
      static_cast<size_t>(std::count_if(tokens.begin(), tokens.end(), [](auto& t) { return !t.empty(); }));
  const auto encoding =
      std::find_if(known.begin(), known.end(), [&](const TiktokenEncoding& e) { return e.ranks == ranks; });
  if (encoding == known.end()) {
    throw sdk::Error(fmt::format(
        "tiktoken file '{}' has {} ranks (highest {}): kforge knows the pre-tokenizer and special tokens of "
        "r50k_base (50256 ranks), p50k_base (50280), cl100k_base (100256) and o200k_base (199998) only",
        path.string(), ranks, tokens.size() - 1));
  }
  const std::string origin = fmt::format("tiktoken file '{}'", path.string());
  BpeTokenizer::Options options;
  options.kind = "tiktoken";
  options.name = encoding->name;
  options.path = path.string();
  options.added = encoding->specials;
  options.match_added_in_text = false;
  options.special.eos = encoding->specials.front().id;
  return std::make_unique<BpeTokenizer>(BpeModel(std::move(tokens), nullptr, true, origin),
                                        Pretokenizer({encoding->pattern}, origin), std::move(options));
}

}  // namespace kforge::data
