// Byte-level BPE's reversible byte <-> character mapping (GPT-2's bytes_to_unicode): every byte is written as
// one printable character, so a tokenizer.json vocabulary stores raw bytes as text ("Ġ" is the byte 0x20).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kforge::data {

/// The UTF-8 text of the character that stands for `byte`.
const std::string& byte_to_unicode(uint8_t byte);

/// The bytes a byte-level token string stands for; nullopt when it holds a character outside the mapping.
std::optional<std::string> unicode_to_bytes(std::string_view token);

}  // namespace kforge::data
