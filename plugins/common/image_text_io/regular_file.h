// Reading data files named by a dataset (an image, a clip) safely: regular files only, up to a size cap, and never
// their contents in a message; and resolving a manifest's relative paths under the manifest's directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace kforge::image_text {

/// Why `path` may not be read as a data file of at most `max_bytes` bytes (missing, not a regular file: a device, a
/// FIFO, a directory; or larger than the cap, naming its size and the cap's key `cap_key`); "" when it may.
std::string data_file_refusal(const std::string& path, int64_t max_bytes, const std::string& cap_key);

/// The bytes of `path` when data_file_refusal() finds none; else throws SampleError "<what>: <refusal>". The file is
/// checked through the descriptor it is read from, so it cannot be swapped for a device between check and read.
std::string read_data_file(const std::string& path, int64_t max_bytes, const std::string& cap_key,
                           const std::string& what);

/// A manifest's `path` for a manifest in `dir`: an absolute path as it is; a relative one under `dir`. Throws
/// sdk::Error when a relative path leaves `dir` ("..", after lexical normalisation).
std::filesystem::path resolve_manifest_path(const std::filesystem::path& dir, const std::string& path);

}  // namespace kforge::image_text
