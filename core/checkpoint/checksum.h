// Checksum of checkpoint files: detects truncation and corruption before any state is loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kforge::checkpoint {

/// 64-bit FNV-1a over 8-byte little-endian words (tail bytes one at a time); fast, not cryptographic.
uint64_t checksum(const void* data, size_t size);

/// The same checksum over bytes that arrive in pieces (a file written tensor by tensor).
class Checksum {
 public:
  void update(const void* data, size_t size);
  uint64_t value() const;  ///< of everything so far, equal to checksum() of it in one piece

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
  unsigned char pending_[8] = {};  ///< a word not yet complete
  size_t pending_size_ = 0;
};

/// Lower-case 16-digit hex.
std::string checksum_hex(uint64_t value);

}  // namespace kforge::checkpoint
