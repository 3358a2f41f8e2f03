// packing_eos_id: where a packed run's EOS id comes from, and which models may pack.
#include "feed/packing.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/tokenizer.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"

namespace kforge::feed {
namespace {

namespace fs = std::filesystem;

// The eos_id of a prepare-data metadata.json ("kforge-tokens-v1") in `dir` or its parent, where prepare-data
// writes it (OUTPUT/metadata.json, shards in OUTPUT/train and OUTPUT/eval).
std::optional<int64_t> prepared_eos_id(const std::string& dir) {
  fs::path here = fs::absolute(dir).lexically_normal();
  if (!here.has_filename()) here = here.parent_path();  // "out/train/" names out/train
  for (const fs::path& base : {here, here.parent_path()}) {
    const fs::path file = base / "metadata.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    const nlohmann::json meta = nlohmann::json::parse(std::ifstream(file), nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object() || meta.value("format", "") != "kforge-tokens-v1") continue;
    if (!meta.contains("eos_id") || !meta["eos_id"].is_number_integer() || meta["eos_id"].get<int64_t>() < 0) {
      throw sdk::ConfigError(
          fmt::format("[data] pack_sequences = true: {} has no eos_id >= 0 (got {}); set [data] "
                      "tokenizer_path to the tokenizer of the data",
                      file.string(), meta.value("eos_id", nlohmann::json()).dump()));
    }
    return meta["eos_id"].get<int64_t>();
  }
  return std::nullopt;
}

}  // namespace

int64_t packing_eos_id(const config::JobConfig& job, uint32_t model_capabilities) {
  if (!job.view("data").get_bool("pack_sequences")) return -1;
  const std::string model_type = job.view("model").get_string("model_type");
  if ((model_capabilities & KFORGE_CAP_DOCUMENT_MASK) == 0) {
    throw sdk::ConfigError(fmt::format(
        "[data] pack_sequences = true needs a model that keeps attention within each document, but [model] "
        "model_type = \"{}\" does not declare the document_mask capability (kforge list-plugins -v shows which "
        "do); set pack_sequences = false or use such a model",
        model_type));
  }
  if (!job.data.tokenizer_path.empty()) {
    const int eos = data::Tokenizer(job.data.tokenizer_path).eos_id();
    if (eos < 0) {
      throw sdk::ConfigError(fmt::format(
          "[data] pack_sequences = true: the tokenizer at [data] tokenizer_path = \"{}\" has no EOS token to split "
          "documents at",
          job.data.tokenizer_path));
    }
    return eos;
  }
  // The data's metadata.json files: dataset_path's, or each mixture source's, which must agree.
  std::vector<std::pair<std::string, std::string>> dirs{{"[data] dataset_path", job.data.dataset_path}};
  for (const config::DatasetSource& source : job.data.datasets) {
    dirs.emplace_back(fmt::format("source '{}'", source.name), source.path);
  }
  std::optional<int64_t> found;
  std::string said;
  for (const auto& [what, dir] : dirs) {
    if (dir.empty()) continue;
    const std::optional<int64_t> eos = prepared_eos_id(dir);
    if (!eos) continue;
    said += fmt::format("{}{} (\"{}\") eos_id {}", said.empty() ? "" : ", ", what, dir, *eos);
    if (found && *found != *eos) {
      throw sdk::ConfigError(fmt::format(
          "[data] pack_sequences = true: the mixture's sources were prepared with different EOS ids ({}), so no "
          "one id splits every source's documents; set [data] tokenizer_path to the tokenizer of the data, or mix "
          "sources prepared with one tokenizer",
          said));
    }
    found = eos;
  }
  if (found) return *found;
  throw sdk::ConfigError(
      "[data] pack_sequences = true needs the EOS id that separates documents: set [data] tokenizer_path to the "
      "data's tokenizer, or train on shards written by `kforge prepare-data` (its metadata.json records eos_id)");
}

}  // namespace kforge::feed
