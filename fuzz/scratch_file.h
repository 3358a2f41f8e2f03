// Scratch files for fuzz targets whose entry point reads a path: one private folder per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace kforge::fuzz {

/// A folder of this process under $TMPDIR (default /tmp), created on first use, removed at exit.
const std::filesystem::path& scratch_dir();

/// Replaces `path` with exactly `size` bytes of `data`; aborts if it cannot (a harness fault).
void write_bytes(const std::filesystem::path& path, const uint8_t* data, size_t size);

}  // namespace kforge::fuzz
