// hf_export: the JSON Lines or Arrow files of one split of a Hugging Face dataset on local disk, and the
// key of the token cache they are tokenised into.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::data {

/// The files of split `split` of the export at `path`, sorted by name. `path` may be one file (taken
/// whatever the split). A directory is searched (in its subdirectory `config` when that is not empty)
/// for SPLIT.EXT and SPLIT-*.EXT (`train-00000-of-00002.jsonl`), also under `data/`, and for the
/// files of a SPLIT/ subdirectory; EXT is .jsonl, .json or .ndjson, optionally compressed (.gz, .zst,
/// .xz, .bz2, .lz4), or .arrow (an Arrow IPC stream). A directory that `datasets`' save_to_disk wrote
/// gives the Arrow files its state.json lists, in that order: a Dataset (state.json; its _split, when
/// set, must be `split`) or a DatasetDict (dataset_dict.json, the split's subdirectory). Throws
/// sdk::ConfigError (for the caller to prefix with the config key) when `path` does not exist (a hub
/// id: there is no hub access; it says how to export), when a file of the split is Parquet (naming it),
/// when a saved dataset is of another split or lists a missing file, or when no file matches (naming
/// the files there).
std::vector<std::filesystem::path> hf_export_files(const std::filesystem::path& path, const std::string& config,
                                                   const std::string& split);

/// 16 hex digits: XXH3-64 of the files' absolute names, sizes and modification times, the tokenizer's
/// content hash, the text field and the split. Any change to these names another cache.
std::string hf_cache_key(const std::vector<std::filesystem::path>& files, const std::string& tokenizer_xxh3,
                         const std::string& text_field, const std::string& split);

}  // namespace kforge::data
