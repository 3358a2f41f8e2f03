// A Hugging Face model directory's weight files: shard planning, the index, and reading them back.
#include "interop/hf_weight_files.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/durable_file.h"
#include "checkpoint/mapped_file.h"
#include "checkpoint/safetensors.h"
#include "interop/json_file.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

std::string weights_mb(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

}  // namespace

int64_t parse_shard_size(const std::string& text) {
  static const std::pair<const char*, int64_t> kUnits[] = {
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}, {"KB", 1000},
      {"MB", 1000000},    {"GB", 1000000000}, {"B", 1},           {"", 1}};
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  for (const auto& [name, scale] : kUnits) {
    if (digits == 0 || digits > 12 || unit != name) continue;
    const int64_t value = std::stoll(text.substr(0, digits)) * scale;
    if (value > 0) return value;
  }
  throw sdk::ConfigError(fmt::format("shard size '{}' is not a positive size like 5GB, 500MB, 2GiB or 4096", text));
}

std::vector<std::string> write_hf_weights(const fs::path& out,
                                          const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                                          int64_t max_shard_bytes,
                                          const std::function<void(const std::string&)>& progress) {
  std::vector<checkpoint::TensorMap> shards(1);
  std::vector<int64_t> shard_bytes(1, 0);
  int64_t total = 0;
  for (const auto& [name, t] : tensors) {
    const auto bytes = static_cast<int64_t>(t.nbytes());
    if (!shards.back().empty() && shard_bytes.back() + bytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes.push_back(0);
    }
    shards.back().emplace(name, t);
    shard_bytes.back() += bytes;
    total += bytes;
  }
  const size_t n = shards.size();
  std::vector<std::string> files;
  nlohmann::json weight_map = nlohmann::json::object();
  for (size_t i = 0; i < n; ++i) {
    const std::string file = n == 1 ? kSingleFile : fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, n);
    checkpoint::write_safetensors(out / file, shards[i], {{"format", "pt"}});
    for (const auto& item : shards[i]) weight_map[item.first] = file;
    files.push_back(file);
    progress(
        fmt::format("wrote {} ({} tensors, {})", (out / file).string(), shards[i].size(), weights_mb(shard_bytes[i])));
  }
  if (n > 1) {
    const nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
    checkpoint::write_durable(out / kIndexFile, index.dump(2) + "\n");
    files.push_back(kIndexFile);
    progress(fmt::format("wrote {} ({} tensors in {} shards)", (out / kIndexFile).string(), weight_map.size(), n));
  }
  return files;
}

std::map<std::string, HfTensorInfo> read_hf_weight_headers(const fs::path& dir) {
  std::map<std::string, std::set<std::string>> listed;  // file -> the tensors the index puts in it
  if (fs::exists(dir / kIndexFile)) {
    const fs::path index_path = dir / kIndexFile;
    const nlohmann::json index = read_json_object(index_path);
    if (!index.contains("weight_map") || !index["weight_map"].is_object()) {
      throw sdk::ConfigError(fmt::format("{}: has no 'weight_map' object", index_path.string()));
    }
    for (const auto& [name, file] : index["weight_map"].items()) {
      const std::string f = file.is_string() ? file.get<std::string>() : "";
      if (f.empty() || f.find('/') != std::string::npos || f == "..") {
        throw sdk::ConfigError(fmt::format("{}: weight_map['{}'] is {}, not a file of the directory",
                                           index_path.string(), name, file.dump()));
      }
      listed[f].insert(name);
    }
  } else if (fs::exists(dir / kSingleFile)) {
    listed[kSingleFile] = {};
  } else {
    throw sdk::ConfigError(
        fmt::format("{}: neither {} nor {} is there (kforge reads safetensors weights only; convert "
                    "pytorch_model.bin files to safetensors first)",
                    dir.string(), kSingleFile, kIndexFile));
  }
  std::map<std::string, HfTensorInfo> out;
  for (const auto& [file, names] : listed) {
    const fs::path path = dir / file;
    if (!fs::exists(path)) {
      throw sdk::ConfigError(fmt::format("{}: missing, but {} lists it", path.string(), kIndexFile));
    }
    const checkpoint::MappedFile mapped(path);
    const bool indexed = !names.empty();
    for (auto& [name, entry] : checkpoint::read_safetensors_header(mapped.bytes(), path.string()).tensors) {
      if (indexed && names.count(name) == 0) continue;
      if (!out.emplace(name, HfTensorInfo{entry.dtype, std::move(entry.shape), file}).second) {
        throw sdk::ConfigError(fmt::format("{}: tensor '{}' is also in {}", path.string(), name, out.at(name).file));
      }
    }
    for (const std::string& name : names) {
      if (!out.count(name)) {
        throw sdk::ConfigError(
            fmt::format("{}: holds no tensor '{}', which {} places there", path.string(), name, kIndexFile));
      }
    }
  }
  return out;
}

std::map<std::string, HfTensor> read_hf_weights(const fs::path& dir, const std::map<std::string, HfTensorInfo>& wanted,
                                                const std::function<void(const std::string&)>& progress) {
  std::map<std::string, std::set<std::string>> by_file;
  for (const auto& [name, info] : wanted) by_file[info.file].insert(name);
  std::map<std::string, HfTensor> out;
  for (const auto& [file, names] : by_file) {
    const fs::path path = dir / file;
    const checkpoint::MappedFile mapped(path);
    for (auto& [name, t] : checkpoint::decode_safetensors(mapped.bytes(), path.string(),
                                                          [&](const std::string& n) { return names.count(n) > 0; })) {
      out.emplace(name, HfTensor{t, file});
    }
    progress(fmt::format("read {}", path.string()));
  }
  return out;
}

}  // namespace kforge::interop
