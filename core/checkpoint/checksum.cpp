// Checksum: thin wrappers over libxxhash's one-shot and streaming XXH3-64.
#include "checkpoint/checksum.h"

#include <xxhash.h>

#include <fmt/format.h>

#include <new>

namespace kforge::checkpoint {

uint64_t checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

Checksum::Checksum() : state_(XXH3_createState()) {
  if (!state_ || XXH3_64bits_reset(state_.get()) != XXH_OK) throw std::bad_alloc();
}

void Checksum::FreeState::operator()(XXH3_state_s* state) const { XXH3_freeState(state); }

void Checksum::update(const void* data, size_t size) { XXH3_64bits_update(state_.get(), data, size); }

uint64_t Checksum::value() const { return XXH3_64bits_digest(state_.get()); }

std::string checksum_hex(uint64_t value) { return fmt::format("{:016x}", value); }

}  // namespace kforge::checkpoint
