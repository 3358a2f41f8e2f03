// Helpers for the data tests: hand-written shard files and the memmap dataset built as the host does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/dataset.h"

namespace kforge::test {

/// Writes a .npy file byte by byte: `descr`, `fortran`, `shape` text (e.g. "(10,)"), then `data`.
void write_raw_npy(const std::filesystem::path& path, const std::string& descr, bool fortran, const std::string& shape,
                   const std::string& data, int major_version = 1);

/// Little-endian bytes of the values as uint16 / uint32.
std::string u16_bytes(const std::vector<int64_t>& values);
std::string u32_bytes(const std::vector<int64_t>& values);

/// start, start+1, ..., start+n-1.
std::vector<int64_t> arange(int64_t start, int64_t n);

/// The configured dataset plugin (default memmap) over `dir`, built through plugins::Components with
/// [train] seq_len and any extra [data] lines; vocab_size > 0 makes it refuse ids at or past it (0: no check).
std::unique_ptr<sdk::Dataset> open_dataset(const std::filesystem::path& dir, const std::string& pattern,
                                           int64_t seq_len, const std::string& data_toml = "", int64_t vocab_size = 0);

/// Tensor contents as a vector.
std::vector<int64_t> to_vector(const at::Tensor& t);

}  // namespace kforge::test

/// EXPECT that string `text` contains `part`, printing both when it does not.
#define EXPECT_HAS(text, part)                                                                    \
  EXPECT_NE(std::string(text).find(std::string(part)), std::string::npos)                          \
      << "expected to find: " << std::string(part) << "\n in: " << std::string(text)
