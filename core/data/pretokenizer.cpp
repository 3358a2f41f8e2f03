// Pretokenizer: PCRE2 compiled with PCRE2_UTF | PCRE2_UCP (\s, \p{L} ... by Unicode properties, as the Rust and
// Oniguruma regexes of tiktoken and tokenizers) and PCRE2_MATCH_INVALID_UTF (invalid bytes match nothing, so they
// become pieces of their own between matches), JIT-compiled where the platform has a JIT.
#include "data/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

struct Pcre2MatchData {
  pcre2_match_data* data;
  explicit Pcre2MatchData(const pcre2_code* code) : data(pcre2_match_data_create_from_pattern(code, nullptr)) {
    if (data == nullptr) throw std::bad_alloc();
  }
  ~Pcre2MatchData() { pcre2_match_data_free(data); }
  Pcre2MatchData(const Pcre2MatchData&) = delete;
  Pcre2MatchData& operator=(const Pcre2MatchData&) = delete;
};

}  // namespace

struct Pretokenizer::Regex {
  std::string pattern;
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer(const std::vector<std::string>& patterns, const std::string& origin) {
  for (const auto& pattern : patterns) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    auto regex = std::make_unique<Regex>();
    regex->pattern = pattern;
    regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
    if (regex->code == nullptr) {
      throw sdk::Error(fmt::format("{}: the pre-tokenizer regex '{}' does not compile (PCRE2) at offset {}: {}", origin,
                                   pattern, offset, pcre2_message(error)));
    }
    pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE);  // without a JIT, pcre2_match interprets
    regexes_.push_back(std::move(regex));
  }
}

Pretokenizer::~Pretokenizer() = default;
Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;

void Pretokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  const size_t first = pieces.size();
  pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const auto& regex : regexes_) {
    next.clear();
    for (size_t i = first; i < pieces.size(); ++i) split_with(*regex, pieces[i], next);
    pieces.resize(first);
    pieces.insert(pieces.end(), next.begin(), next.end());
  }
}

void Pretokenizer::split_with(const Regex& regex, std::string_view text, std::vector<std::string_view>& pieces) const {
  const Pcre2MatchData match(regex.code);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  while (at < text.size()) {
    const int rc = pcre2_match(regex.code, subject, text.size(), at, 0, match.data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      throw sdk::Error(fmt::format("pre-tokenizer regex '{}' failed at byte {} of a {}-byte text: {}", regex.pattern,
                                   at, text.size(), pcre2_message(rc)));
    }
    const PCRE2_SIZE* span = pcre2_get_ovector_pointer(match.data);
    if (span[0] > at) pieces.push_back(text.substr(at, span[0] - at));
    if (span[1] == span[0]) {  // an empty match: the next character is a piece of its own
      size_t end = span[0] + 1;
      while (end < text.size() && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) ++end;
      pieces.push_back(text.substr(span[0], end - span[0]));
      at = end;
      continue;
    }
    pieces.push_back(text.substr(span[0], span[1] - span[0]));
    at = span[1];
  }
  if (at < text.size()) pieces.push_back(text.substr(at));
}

}  // namespace kforge::data
