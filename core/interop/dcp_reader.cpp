// DcpReader: .metadata parsed, .distcp files mapped, tensors assembled from their torch.save'd chunks.
#include "interop/dcp_reader.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "interop/torch_save.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace fs = std::filesystem;

at::ScalarType dcp_dtype(const std::string& name, const std::string& what) {
  static const std::map<std::string, at::ScalarType> dtypes = {
      {"float32", at::kFloat}, {"float64", at::kDouble}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16},
      {"int64", at::kLong},    {"int32", at::kInt},      {"int16", at::kShort}, {"int8", at::kChar},
      {"uint8", at::kByte},    {"bool", at::kBool}};
  const auto it = dtypes.find(name);
  if (it == dtypes.end()) throw sdk::Error(fmt::format("{}: dtype '{}' is not one kforge reads", what, name));
  return it->second;
}

DcpReader::DcpReader(const std::vector<fs::path>& dirs) {
  for (const fs::path& dir : dirs) {
    const fs::path path = dir / ".metadata";
    const checkpoint::MappedFile file(path);
    for (auto& [key, item] : parse_dcp_metadata(file.bytes(), path.string())) {
      if (!dir_of_.emplace(key, dir).second) {
        if (!item.tensor && !items_.at(key).tensor) continue;  // each stage's optimizer has its own param_groups
        throw sdk::Error(fmt::format("{}: tensor '{}' is also in {}; pipeline stages hold disjoint tensors",
                                     path.string(), key, (dir_of_.at(key) / ".metadata").string()));
      }
      items_.emplace(key, std::move(item));
    }
  }
}

at::Tensor DcpReader::tensor(const std::string& key) const {
  const DcpItem& item = items_.at(key);
  if (!item.tensor) throw sdk::Error(fmt::format("'{}' is a pickled value in the checkpoint, not a tensor", key));
  const at::ScalarType dtype = dcp_dtype(item.dtype, fmt::format("'{}'", key));
  at::Tensor whole = at::zeros(item.size, at::TensorOptions().dtype(dtype));
  int64_t covered = 0;
  for (const DcpChunk& chunk : item.chunks) {
    const fs::path path = dir_of_.at(key) / chunk.file;
    auto& mapped = files_[path];
    if (!mapped) mapped = std::make_unique<checkpoint::MappedFile>(path);
    const std::string_view bytes = mapped->bytes();
    if (chunk.offset > bytes.size() || chunk.length > bytes.size() - chunk.offset) {
      throw sdk::Error(fmt::format("{}: '{}' lies at bytes [{}, {}) of a file of {} bytes; the file is truncated",
                                   path.string(), key, chunk.offset, chunk.offset + chunk.length, bytes.size()));
    }
    const std::string origin = fmt::format("{} at byte {} ('{}')", path.string(), chunk.offset, key);
    const TorchSaved saved(bytes.substr(chunk.offset, chunk.length), origin);
    const at::Tensor piece = saved.tensor(saved.root(), "the saved object");
    if (piece.sizes().vec() != chunk.sizes || piece.scalar_type() != dtype) {
      throw sdk::Error(fmt::format("{}: holds a {} tensor of shape {} where .metadata says {} of shape {}", origin,
                                   c10::toString(piece.scalar_type()), c10::str(piece.sizes()), item.dtype,
                                   c10::str(c10::IntArrayRef(chunk.sizes))));
    }
    at::Tensor target = whole;
    for (size_t d = 0; d < chunk.sizes.size(); ++d) {
      target = target.narrow(static_cast<int64_t>(d), chunk.offsets[d], chunk.sizes[d]);
    }
    target.copy_(piece);
    covered += piece.numel();
  }
  if (covered != whole.numel()) {
    throw sdk::Error(fmt::format("{}: the chunks of '{}' hold {} of its {} elements; a rank's .distcp file is missing "
                                 "part of it",
                                 (dir_of_.at(key) / ".metadata").string(), key, covered, whole.numel()));
  }
  return whole;
}

}  // namespace kforge::interop
