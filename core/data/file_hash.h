// file_xxh3: the XXH3-64 hash of a file, as `xxhsum -H3 FILE` prints it (prepare-data records the tokenizer's).
#pragma once

#include <filesystem>
#include <string>

namespace kforge::data {

/// Lower-case 16 hex digits; throws kforge::sdk::Error naming the file when it cannot be read.
std::string file_xxh3(const std::filesystem::path& path);

}  // namespace kforge::data
