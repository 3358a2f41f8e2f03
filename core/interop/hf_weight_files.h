// A Hugging Face model directory's weight files: model.safetensors, or shards listed by
// model.safetensors.index.json once the weights exceed the shard size.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kforge::interop {

/// Hugging Face's default shard size ("5GB", decimal).
inline constexpr int64_t kDefaultMaxShardBytes = 5'000'000'000;

/// Bytes of a shard size as Hugging Face writes it: "5GB", "500MB", "10KB" (decimal), "2GiB",
/// "64MiB", "1KiB" (binary) or plain bytes ("4096"). Throws sdk::ConfigError naming the text.
int64_t parse_shard_size(const std::string& text);

/// Writes `tensors`, in order, into out/model.safetensors; when their bytes exceed max_shard_bytes,
/// into model-0000I-of-0000N.safetensors files instead (a new file whenever the next tensor would
/// overflow the current one; a tensor larger than the limit gets a file of its own) plus
/// model.safetensors.index.json {metadata.total_size, weight_map}. Reports each file through
/// `progress`; returns the file names written.
std::vector<std::string> write_hf_weights(const std::filesystem::path& out,
                                          const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                                          int64_t max_shard_bytes,
                                          const std::function<void(const std::string&)>& progress);

/// A tensor of a Hugging Face directory as its safetensors header describes it.
struct HfTensorInfo {
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  std::string file;  ///< the file that holds it (for messages)
};

/// Every tensor of a Hugging Face directory from the safetensors headers alone (no tensor data read): the shards
/// model.safetensors.index.json lists (each tensor in the file its weight_map names), or model.safetensors. Throws
/// sdk::ConfigError naming the file: neither present, a listed shard missing, a tensor not where the index says, a
/// duplicate; sdk::Error for a file that is not valid safetensors.
std::map<std::string, HfTensorInfo> read_hf_weight_headers(const std::filesystem::path& dir);

struct HfTensor {
  at::Tensor tensor;
  std::string file;  ///< the file it was read from (for messages)
};

/// The tensors `wanted` names (read_hf_weight_headers of the same directory, or some of them), read from their files.
std::map<std::string, HfTensor> read_hf_weights(const std::filesystem::path& dir,
                                                const std::map<std::string, HfTensorInfo>& wanted,
                                                const std::function<void(const std::string&)>& progress);

}  // namespace kforge::interop
