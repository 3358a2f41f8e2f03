// NFC: utf8proc_NFC (utf8proc_map with STABLE | COMPOSE, on an explicit length so NUL bytes pass; checked against
// Python's unicodedata for every code point, which agreed but for U+11A7 below), and a quick
// check from a table of the code points that cannot take part in a change, built once from utf8proc's data.
#include "data/nfc.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

constexpr utf8proc_int32_t kFirstComposing = 0x300;  // below it every character is a stable starter
constexpr utf8proc_int32_t kCodePoints = 0x110000;
// utf8proc 2.6 (Debian 12) composes a Hangul LV syllable with U+11A7, which is no trailing consonant, and drops it.
// U+11A7 is a starter that composes with nothing, so NFC of the text around it, with it kept, is exact.
constexpr utf8proc_int32_t kHangulTrailingFiller = 0x11A7;

void append_nfc(std::string_view valid_utf8, std::string& out) {
  utf8proc_uint8_t* result = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(valid_utf8.data()),
                              static_cast<utf8proc_ssize_t>(valid_utf8.size()), &result,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) throw sdk::Error(fmt::format("NFC normalization failed: {}", utf8proc_errmsg(n)));
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
  out.append(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
}

/// Marks the code points that may change, or make a neighbour change, under NFC: a non-zero combining class, a
/// character whose NFC differs from itself, and every character that follows the first in a canonical
/// decomposition (the possible second halves of a composition, Hangul vowel and trailing jamo included).
std::vector<bool> nfc_sensitive_code_points() {
  std::vector<bool> sensitive(kCodePoints, false);
  utf8proc_int32_t parts[32];
  for (utf8proc_int32_t c = kFirstComposing; c < kCodePoints; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    if (utf8proc_get_property(c)->combining_class != 0) sensitive[c] = true;
    int boundary = 0;
    const auto n = utf8proc_decompose_char(c, parts, 32, UTF8PROC_DECOMPOSE, &boundary);
    if (n < 1 || (n == 1 && parts[0] == c)) continue;
    for (utf8proc_ssize_t i = 1; i < n; ++i) sensitive[parts[i]] = true;
    char utf8[4];
    std::string alone;
    alone.append(utf8, static_cast<size_t>(utf8proc_encode_char(c, reinterpret_cast<utf8proc_uint8_t*>(utf8))));
    std::string normalized;
    append_nfc(alone, normalized);
    if (normalized != alone) sensitive[c] = true;
  }
  return sensitive;
}

}  // namespace

bool may_change_under_nfc(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  for (size_t at = 0; at < text.size();) {
    if (bytes[at] < 0xCC) {  // ASCII, a continuation byte, or a lead byte of a code point below U+0300
      ++at;
      continue;
    }
    utf8proc_int32_t c;
    const auto n = utf8proc_iterate(bytes + at, static_cast<utf8proc_ssize_t>(text.size() - at), &c);
    if (n < 1) return true;
    static const std::vector<bool> sensitive = nfc_sensitive_code_points();
    if (sensitive[c]) return true;
    at += static_cast<size_t>(n);
  }
  return false;
}

std::string nfc_normalize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t run = 0, at = 0;
  while (at < text.size()) {
    utf8proc_int32_t code_point;
    const auto n = utf8proc_iterate(bytes + at, static_cast<utf8proc_ssize_t>(text.size() - at), &code_point);
    if (n > 0 && code_point != kHangulTrailingFiller) {
      at += static_cast<size_t>(n);
      continue;
    }
    const size_t kept = n > 0 ? static_cast<size_t>(n) : 1;
    append_nfc(text.substr(run, at - run), out);
    out.append(text.substr(at, kept));
    run = at += kept;
  }
  append_nfc(text.substr(run), out);
  return out;
}

}  // namespace kforge::data
