// GPT-2's bytes_to_unicode: the printable bytes of Latin-1 ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves; the other 68 bytes, in order, for U+0100, U+0101, ...
#include "data/byte_level.h"

#include <array>

namespace kforge::data {
namespace {

constexpr char32_t kByteLevelLimit = 0x100 + 68;  // one past the highest character of the mapping

bool byte_is_printable(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct ByteLevelTables {
  std::array<std::string, 256> to_text;
  std::array<int, kByteLevelLimit> to_byte;  // -1: not a character of the mapping
  ByteLevelTables() {
    to_byte.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const char32_t c = byte_is_printable(b) ? static_cast<char32_t>(b) : next++;
      to_byte[c] = b;
      to_text[b] = c < 0x80 ? std::string(1, static_cast<char>(c))
                            : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
    }
  }
};

const ByteLevelTables& byte_level_tables() {
  static const ByteLevelTables tables;
  return tables;
}

}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return byte_level_tables().to_text[byte]; }

std::optional<std::string> unicode_to_bytes(std::string_view token) {
  const auto& tables = byte_level_tables();
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const auto lead = static_cast<uint8_t>(token[i]);
    char32_t c;
    if (lead < 0x80) {
      c = lead;
      i += 1;
    } else if ((lead & 0xE0) == 0xC0 && i + 1 < token.size() && (static_cast<uint8_t>(token[i + 1]) & 0xC0) == 0x80) {
      c = (static_cast<char32_t>(lead & 0x1F) << 6) | (static_cast<uint8_t>(token[i + 1]) & 0x3F);
      i += 2;
    } else {
      return std::nullopt;  // every character of the mapping is one or two UTF-8 bytes
    }
    if (c >= kByteLevelLimit || tables.to_byte[c] < 0) return std::nullopt;
    out.push_back(static_cast<char>(tables.to_byte[c]));
  }
  return out;
}

}  // namespace kforge::data
