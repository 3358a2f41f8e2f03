// Reading a whole file into a string, for tests that check what kforge wrote.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::test {

/// The file's bytes; empty when it cannot be opened.
std::string read_file(const std::filesystem::path& path);

}  // namespace kforge::test
