// file_xxh3: the XXH3-64 hash of a file, as `xxhsum -H3 FILE` prints it (prepare-data records the tokenizer's),
// and of bytes in memory.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::data {

/// Lower-case 16 hex digits; throws kforge::sdk::Error naming the file when it cannot be read.
std::string file_xxh3(const std::filesystem::path& path);

/// The same digest of `bytes`.
std::string bytes_xxh3(const std::string& bytes);

}  // namespace kforge::data
