// Checksum of checkpoint files: XXH3-64 (libxxhash), the hash `xxhsum -H3 FILE` prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

struct XXH3_state_s;

namespace kforge::checkpoint {

/// XXH3-64 (seed 0) of `size` bytes; fast, not cryptographic.
uint64_t checksum(const void* data, size_t size);

/// The same checksum over bytes that arrive in pieces (a file written tensor by tensor).
class Checksum {
 public:
  Checksum();
  void update(const void* data, size_t size);
  uint64_t value() const;  ///< of everything so far, equal to checksum() of it in one piece

 private:
  struct FreeState {
    void operator()(XXH3_state_s* state) const;
  };
  std::unique_ptr<XXH3_state_s, FreeState> state_;
};

/// Lower-case 16-digit hex, exactly as `xxhsum -H3` prints it.
std::string checksum_hex(uint64_t value);

}  // namespace kforge::checkpoint
