// The independent checksum reader: Debian's xxhsum (package xxhash) run on a file.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::test {

/// True when `xxhsum` is on PATH (scripts/setup.sh installs it).
bool xxhsum_available();

/// The XXH3-64 hex digits `xxhsum -H3 FILE` prints for `file`; adds a test failure and returns
/// the whole output when xxhsum fails.
std::string xxhsum_h3(const std::filesystem::path& file);

}  // namespace kforge::test
