// safetensors files: an 8-byte header length, a JSON header (dtype, shape, data offsets per
// tensor, plus string metadata), then the raw little-endian tensor bytes.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::checkpoint {

using TensorMap = std::map<std::string, at::Tensor>;

/// Which tensors a decode materialises, by name; an empty filter takes every tensor.
using TensorFilter = std::function<bool(const std::string& name)>;

/// Serialises tensors (any CPU dtype of F64/F32/BF16/F16/I64/I32/U8/BOOL) and metadata.
std::string encode_safetensors(const TensorMap& tensors, const std::map<std::string, std::string>& metadata = {});

/// What write_safetensors wrote: its size and checkpoint::checksum (XXH3-64) of its bytes.
struct WrittenFile {
  size_t bytes = 0;
  uint64_t checksum = 0;
};

/// The same bytes as encode_safetensors, streamed to `path` tensor by tensor (never the whole file
/// in memory) and fsynced, passing the fault points kFaultPointShardPartial (halfway through the tensor
/// bytes) and kFaultPointShardWritten (before the fsync); throws sdk::Error naming the path and
/// strerror(errno) when it cannot be written.
WrittenFile write_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                              const std::map<std::string, std::string>& metadata = {});

/// One tensor of a safetensors header: dtype, shape and [begin, end) in the data section.
struct SafetensorsEntry {
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  size_t begin = 0, end = 0;
};

/// A safetensors header: every tensor's entry by name, the string metadata, and where the data section starts.
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;
  size_t data_offset = 0;
};

/// Parses and validates the header of a whole file image (dtypes, shapes, offsets that tile the data section and
/// lie within the image) without reading any tensor's bytes. Throws sdk::Error naming `origin` and the defect
/// (truncated data, bad header, offsets out of range, unknown dtype).
SafetensorsHeader read_safetensors_header(std::string_view bytes, const std::string& origin);

/// Parses a whole file image (in memory or mapped) and copies out the tensors `wanted` accepts;
/// the others are validated but never read. Throws sdk::Error naming `origin` and the defect
/// (truncated data, bad header, offsets out of range, unknown dtype).
TensorMap decode_safetensors(std::string_view bytes, const std::string& origin, const TensorFilter& wanted = {},
                             std::map<std::string, std::string>* metadata = nullptr);

}  // namespace kforge::checkpoint
