// load_encoder_weights: finds a Hugging Face directory's safetensors files and loads the encoder's tensors from them.
#include "checkpoint/encoder_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/mapped_file.h"
#include "checkpoint/safetensors.h"
#include "kforge/sdk/error.h"

namespace kforge::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string where(const fs::path& dir) { return fmt::format("[vision_encoder] path = \"{}\"", dir.string()); }

// The weight files of `dir`: model.safetensors, else the distinct files of the index's weight_map.
std::vector<fs::path> weight_files(const fs::path& dir) {
  if (fs::is_regular_file(dir / "model.safetensors")) return {dir / "model.safetensors"};
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::is_regular_file(index)) {
    throw sdk::ConfigError(fmt::format(
        "{}: no model.safetensors or model.safetensors.index.json in the directory; kforge reads encoder weights "
        "from safetensors files only (convert a pytorch_model.bin with safetensors' convert script)",
        where(dir)));
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(std::ifstream(index));
  } catch (const nlohmann::json::exception& e) {
    throw sdk::ConfigError(fmt::format("{}: {} is not valid JSON: {}", where(dir), index.string(), e.what()));
  }
  const auto map = json.find("weight_map");
  if (map == json.end() || !map->is_object()) {
    throw sdk::ConfigError(fmt::format("{}: {} has no \"weight_map\" object", where(dir), index.string()));
  }
  std::set<std::string> names;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string()) {
      throw sdk::ConfigError(fmt::format("{}: {}: the file of tensor '{}' is not a string", where(dir),
                                         index.string(), tensor));
    }
    names.insert(file.get<std::string>());
  }
  std::vector<fs::path> files;
  for (const std::string& name : names) files.push_back(dir / name);
  return files;
}

}  // namespace

EncoderWeights load_encoder_weights(sdk::VisionEncoder& encoder, const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw sdk::ConfigError(fmt::format(
        "{}: not a local directory. kforge has no Hugging Face hub access: fetch the model with `huggingface-cli "
        "download {} --local-dir DIR` (or `git clone https://huggingface.co/{}`) and set path = \"DIR\"",
        where(dir), dir.string(), dir.string()));
  }
  std::set<std::string> wanted;
  for (const auto& p : encoder.named_parameters()) wanted.insert(p.key());
  for (const auto& b : encoder.named_buffers()) wanted.insert(b.key());
  EncoderWeights out;
  out.files = weight_files(dir);
  std::map<std::string, at::Tensor> tensors;
  for (const fs::path& file : out.files) {
    const MappedFile mapped(file);
    for (auto& [name, tensor] : decode_safetensors(mapped.bytes(), file.string(), [&](const std::string& name) {
           if (wanted.count(name) != 0) return true;
           out.unused.push_back(name);
           return false;
         })) {
      tensors[name] = std::move(tensor);
    }
  }
  const std::string origin = out.files.size() == 1 ? out.files.front().string() : (dir / "*.safetensors").string();
  const std::vector<std::string> not_taken = encoder.load_hf_weights(tensors, origin);
  out.loaded = tensors.size() - not_taken.size();
  out.unused.insert(out.unused.end(), not_taken.begin(), not_taken.end());
  std::sort(out.unused.begin(), out.unused.end());
  return out;
}

}  // namespace kforge::checkpoint
