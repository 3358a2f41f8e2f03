// file_xxh3: libxxhash's streaming XXH3-64, inlined from its header (the data layer links no libxxhash).
#include "data/file_hash.h"

#define XXH_INLINE_ALL
#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::data {

std::string file_xxh3(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sdk::Error(fmt::format("cannot read '{}' to hash it: {}", path.string(), std::strerror(errno)));
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(), XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) throw std::bad_alloc();
  std::vector<char> block(1u << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    XXH3_64bits_update(state.get(), block.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw sdk::Error(fmt::format("error reading '{}' to hash it", path.string()));
  return fmt::format("{:016x}", XXH3_64bits_digest(state.get()));
}

std::string bytes_xxh3(const std::string& bytes) {
  return fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
}

}  // namespace kforge::data
