// Parsing and validation of the .npy header of a 1-D uint16/uint32 token shard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kforge::builtin::data {

/// What a valid token shard's header says.
struct NpyInfo {
  size_t data_offset = 0;  ///< bytes before the first token
  size_t itemsize = 0;     ///< 2 (uint16) or 4 (uint32)
  int64_t length = 0;      ///< number of tokens
};

/// Validates the header at the start of `bytes` (the whole file, `file_size` bytes) of `file`:
/// magic, version 1.0/2.0/3.0, a dict of exactly 'descr' ('<u2' or '<u4'), 'fortran_order' (False)
/// and 'shape' (1-D), and file size == header + length * itemsize (overflow-checked). Throws
/// kforge::sdk::Error naming `file` and the fault. Safe on any byte string (the fuzzing entry point):
/// it reads only bytes[0, file_size), and a returned NpyInfo always describes tokens inside the file.
NpyInfo parse_npy_header(const std::string& file, const unsigned char* bytes, size_t file_size);

}  // namespace kforge::builtin::data
