#include "checkpoint/checksum.h"

#include <cstring>
#include <fmt/format.h>

namespace kforge::checkpoint {

uint64_t checksum(const void* data, size_t size) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t hash = 0xcbf29ce484222325ULL;
  const auto* bytes = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    hash = (hash ^ word) * kPrime;
  }
  for (; i < size; ++i) hash = (hash ^ bytes[i]) * kPrime;
  return hash;
}

std::string checksum_hex(uint64_t value) { return fmt::format("{:016x}", value); }

}  // namespace kforge::checkpoint
