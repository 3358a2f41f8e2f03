// The pre-tokenizer of a byte-level BPE: regexes (PCRE2, Unicode properties, JIT) that cut text into the pieces
// BPE merges within. Each regex splits the pieces of the one before; the text between matches is a piece too
// (Hugging Face's Split "Isolated"), so every byte lands in exactly one piece, invalid UTF-8 included.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::data {

/// GPT-2's pattern: r50k_base, p50k_base and tokenizer.json's ByteLevel pre-tokenizer with use_regex.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Pretokenizer {
 public:
  /// Compiles `patterns`; errors name `origin` and the pattern.
  Pretokenizer(const std::vector<std::string>& patterns, const std::string& origin);
  ~Pretokenizer();
  Pretokenizer(Pretokenizer&&) noexcept;

  /// Appends the pieces of `text` (views into it) to `pieces`. Thread-safe.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

 private:
  struct Regex;
  void split_with(const Regex& regex, std::string_view text, std::vector<std::string_view>& pieces) const;

  std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace kforge::data
