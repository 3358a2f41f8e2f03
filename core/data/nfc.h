// Unicode NFC for tokenizer.json's NFC normalizer (utf8proc), on text that may hold invalid UTF-8: the valid runs
// are normalized, the other bytes kept as they are.
#pragma once

#include <string>
#include <string_view>

namespace kforge::data {

/// False when NFC leaves `text` as it is for sure: every character is its own NFC, a starter, and never the second
/// of a composing pair (English with typographic punctuation, most scripts). True also for invalid UTF-8.
bool may_change_under_nfc(std::string_view text);

std::string nfc_normalize(std::string_view text);

}  // namespace kforge::data
