#include "checkpoint/checksum.h"

#include <cstring>
#include <fmt/format.h>

namespace kforge::checkpoint {

namespace {
constexpr uint64_t kPrime = 0x100000001b3ULL;
}  // namespace

uint64_t checksum(const void* data, size_t size) {
  Checksum c;
  c.update(data, size);
  return c.value();
}

void Checksum::update(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  size_t i = 0;
  while (pending_size_ > 0 && pending_size_ < 8 && i < size) pending_[pending_size_++] = bytes[i++];
  if (pending_size_ == 8) {
    uint64_t word;
    std::memcpy(&word, pending_, 8);
    hash_ = (hash_ ^ word) * kPrime;
    pending_size_ = 0;
  }
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    hash_ = (hash_ ^ word) * kPrime;
  }
  for (; i < size; ++i) pending_[pending_size_++] = bytes[i];
}

uint64_t Checksum::value() const {
  uint64_t hash = hash_;
  for (size_t i = 0; i < pending_size_; ++i) hash = (hash ^ pending_[i]) * kPrime;
  return hash;
}

std::string checksum_hex(uint64_t value) { return fmt::format("{:016x}", value); }

}  // namespace kforge::checkpoint
