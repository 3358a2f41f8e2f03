// hf_export: which files of a local Hugging Face export hold a split, and the token cache's key.
#include "data/hf_export.h"

#include <fmt/format.h>

#include <algorithm>
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
      "export it to JSON Lines with the `datasets` library, e.g. python3 -c \"from datasets import load_dataset; "
      "load_dataset('{}'{}, split='{}').to_json('DIR/{}.jsonl')\", and name DIR",
      path.string(), config.empty() ? "" : ", '" + config + "'", split, split);
}

}  // namespace

std::vector<fs::path> hf_export_files(const fs::path& path, const std::string& config, const std::string& split) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw sdk::ConfigError(fmt::format(
        "'{}' is not a local file or directory, and kforge has no Hugging Face Hub access: it reads a dataset "
        "exported to local disk as JSON Lines (a file, or a directory of SPLIT.jsonl or SPLIT-*.jsonl files). It does "
        "not read the hub cache's datasets--* folders, the Arrow files of ~/.cache/huggingface/datasets or of "
        "save_to_disk, or Parquet; {}",
        path.string(), how_to_export(path, config, split)));
  }
  const auto refuse_columnar = [&](const fs::path& file, const ExportName& n) {
    if (n.kind != ExportKind::columnar) return;
    throw sdk::ConfigError(fmt::format(
        "'{}' is {}: kforge reads Hugging Face exports in JSON Lines only (Parquet and Arrow have no Debian C++ "
        "reader); {}",
        file.string(), n.format, how_to_export(path, config, split)));
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
        "'{}' has no JSON Lines file of split '{}' ({}.jsonl or {}-*.jsonl, also .json or .ndjson, compressed or not, "
        "there, in data/ or in {}/); its data files: {}",
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
