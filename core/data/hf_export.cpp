// hf_export: which files of a local Hugging Face export hold a split, and the token cache's key.
#include "data/hf_export.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string_view>

#include "data/file_hash.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

namespace fs = std::filesystem;

enum class ExportKind { jsonl, columnar, other };

struct ExportName {
  std::string stem;  ///< the name without its data and compression extensions
  ExportKind kind;
  std::string format;  ///< "JSON Lines", "Parquet", "Arrow"
};

bool strip_suffix(std::string& name, std::string_view suffix) {
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  name.resize(name.size() - suffix.size());
  return true;
}

ExportName export_name(const fs::path& file) {
  std::string name = file.filename().string();
  for (std::string_view ext : {".gz", ".zst", ".zstd", ".xz", ".bz2", ".lz4"}) {
    if (strip_suffix(name, ext)) break;
  }
  for (std::string_view ext : {".jsonl", ".json", ".ndjson"}) {
    if (strip_suffix(name, ext)) return {name, ExportKind::jsonl, "JSON Lines"};
  }
  if (strip_suffix(name, ".parquet")) return {name, ExportKind::columnar, "Parquet"};
  if (strip_suffix(name, ".arrow")) return {name, ExportKind::columnar, "Arrow"};
  return {name, ExportKind::other, ""};
}

std::string how_to_export(const fs::path& path, const std::string& config, const std::string& split) {
  return fmt::format(
      "export it with the `datasets` library, e.g. python3 -c \"from datasets import load_dataset; "
      "load_dataset('{}'{}, split='{}').save_to_disk('DIR')\" (or .to_json('DIR/{}.jsonl')), and name DIR",
      path.string(), config.empty() ? "" : ", '" + config + "'", split, split);
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw sdk::ConfigError(fmt::format("'{}' is not valid JSON: {}", file.string(), e.what()));
  }
}

// The Arrow files state.json lists in `dir`, a Dataset that save_to_disk wrote (of split `split` when it names one).
std::vector<fs::path> saved_dataset_files(const fs::path& dir, const std::string& split) {
  const fs::path state = dir / "state.json";
  const nlohmann::json j = read_json(state);
  const auto saved_split = j.find("_split");
  if (saved_split != j.end() && saved_split->is_string() && saved_split->get<std::string>() != split) {
    throw sdk::ConfigError(fmt::format("'{}' holds split '{}' (its state.json says so), not split '{}'; set the "
                                       "split key to '{}' or save split '{}'",
                                       dir.string(), saved_split->get<std::string>(), split,
                                       saved_split->get<std::string>(), split));
  }
  const auto listed = j.find("_data_files");
  if (listed == j.end() || !listed->is_array() || listed->empty()) {
    throw sdk::ConfigError(fmt::format("'{}' has no _data_files list of Arrow files", state.string()));
  }
  std::vector<fs::path> files;
  for (const nlohmann::json& entry : *listed) {
    const auto name = entry.find("filename");
    if (!entry.is_object() || name == entry.end() || !name->is_string()) {
      throw sdk::ConfigError(fmt::format("'{}': _data_files entry {} has no filename", state.string(), entry.dump()));
    }
    const fs::path file = dir / name->get<std::string>();
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      throw sdk::ConfigError(fmt::format("'{}' lists '{}', which is not there", state.string(), file.string()));
    }
    files.push_back(file);
  }
  return files;
}

// A save_to_disk directory: a Dataset (state.json) or a DatasetDict (dataset_dict.json naming split subdirectories).
std::optional<std::vector<fs::path>> saved_files(const fs::path& base, const std::string& split) {
  std::error_code ec;
  if (fs::is_regular_file(base / "state.json", ec)) return saved_dataset_files(base, split);
  if (!fs::is_regular_file(base / "dataset_dict.json", ec)) return std::nullopt;
  const nlohmann::json splits = read_json(base / "dataset_dict.json").value("splits", nlohmann::json::array());
  if (!fs::is_regular_file(base / split / "state.json", ec)) {
    throw sdk::ConfigError(fmt::format("'{}' (a saved DatasetDict) has no split '{}' with a state.json; its splits: {}",
                                       base.string(), split, splits.dump()));
  }
  return saved_dataset_files(base / split, split);
}

}  // namespace

std::vector<fs::path> hf_export_files(const fs::path& path, const std::string& config, const std::string& split) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw sdk::ConfigError(fmt::format(
        "'{}' is not a local file or directory (nor a hub id, which kforge looks for in the local Hugging Face "
        "caches), and kforge has no Hugging Face Hub access: it reads a dataset on local disk as JSON Lines (a file, "
        "or a directory of SPLIT.jsonl or SPLIT-*.jsonl files) or as a save_to_disk directory of Arrow files, not "
        "Parquet; {}",
        path.string(), how_to_export(path, config, split)));
  }
  const auto refuse_columnar = [&](const fs::path& file, const ExportName& n) {
    if (n.kind != ExportKind::columnar || n.format != "Parquet") return;
    throw sdk::ConfigError(fmt::format(
        "'{}' is Parquet: kforge reads Hugging Face exports as JSON Lines or Arrow IPC streams (Parquet has no "
        "Debian C++ reader); {}",
        file.string(), how_to_export(path, config, split)));
  };
  if (!fs::is_directory(path, ec)) {
    refuse_columnar(path, export_name(path));
    return {path};
  }
  const fs::path base = config.empty() ? path : path / config;
  if (!fs::is_directory(base, ec)) {
    std::string configs;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.is_directory()) configs += (configs.empty() ? "'" : ", '") + entry.path().filename().string() + "'";
    }
    throw sdk::ConfigError(fmt::format("'{}' has no subdirectory '{}' for the dataset config (its subdirectories: {})",
                                       path.string(), config, configs.empty() ? "none" : configs));
  }
  if (auto saved = saved_files(base, split)) return *saved;
  std::vector<fs::path> found;
  std::vector<std::string> seen;  // data files of any split, for the message when none is of this one
  const auto take = [&](const fs::path& dir, bool whole_dir) {
    if (!fs::is_directory(dir, ec)) return;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      const ExportName n = export_name(entry.path());
      if (n.kind == ExportKind::other) continue;
      seen.push_back(entry.path().lexically_relative(base).string());
      if (!whole_dir && n.stem != split && n.stem.rfind(split + "-", 0) != 0) continue;
      refuse_columnar(entry.path(), n);
      found.push_back(entry.path());
    }
  };
  take(base, false);
  take(base / "data", false);
  take(base / split, true);
  if (found.empty()) {
    std::sort(seen.begin(), seen.end());
    std::string files;
    for (const std::string& f : seen) files += (files.empty() ? "'" : ", '") + f + "'";
    throw sdk::ConfigError(fmt::format(
        "'{}' has no JSON Lines or Arrow file of split '{}' ({}.jsonl or {}-*.jsonl, also .json or .ndjson, compressed "
        "or not, or .arrow, there, in data/ or in {}/), and no save_to_disk state.json or dataset_dict.json; its data "
        "files: {}",
        base.string(), split, split, split, split, files.empty() ? "none" : files));
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string hf_cache_key(const std::vector<fs::path>& files, const std::string& tokenizer_xxh3,
                         const std::string& text_field, const std::string& split) {
  std::string text = "kforge-hf-cache-v1\n";
  for (const fs::path& f : files) {
    text += fmt::format("{}\t{}\t{}\n", fs::absolute(f).lexically_normal().string(), fs::file_size(f),
                        fs::last_write_time(f).time_since_epoch().count());
  }
  text += fmt::format("tokenizer {}\ntext_field {}\nsplit {}\n", tokenizer_xxh3, text_field, split);
  return bytes_xxh3(text);
}

}  // namespace kforge::data
