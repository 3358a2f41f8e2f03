// Checksum of checkpoint files: detects truncation and corruption before any state is loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kforge::checkpoint {

/// 64-bit FNV-1a over 8-byte little-endian words (tail bytes one at a time); fast, not cryptographic.
uint64_t checksum(const void* data, size_t size);

/// Lower-case 16-digit hex.
std::string checksum_hex(uint64_t value);

}  // namespace kforge::checkpoint
