// hf_data: the Hugging Face exports a config names ([data] hf_dataset_name, [eval] hf_dataset_name,
// [[data.datasets]] hf_name), read as memory-mapped shards from a token cache that rank 0 writes with
// prepare-data at start-up while the other ranks wait on the process group's barrier.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "dist/group.h"

namespace kforge::feed {

/// The group whose rank 0 tokenises a missing cache (joined on first use); empty: the dry run, which
/// checks the export and tokenises nothing.
using HfCacheGroup = std::function<const dist::Group&()>;

/// Where the shards of a token cache are.
struct ShardDir {
  std::string dir, pattern;
};

/// The files of `hf`'s split, found offline: in the local export or save_to_disk directory hf.name names
/// (data::hf_export_files); else, for a hub id (ORG/NAME[@REVISION], config::is_hub_id), in the `datasets` cache
/// (config::datasets_cache(), data::datasets_cache_files), else in the hub cache's datasets--ORG--NAME snapshot
/// (read as a local export; Parquet there is refused). Logs which cache it took. Throws sdk::ConfigError beginning
/// with hf.where, naming every path looked at and how to fill them, when none holds the split.
std::vector<std::filesystem::path> hf_split_files(const config::HfExport& hf);

/// The JSON Lines files of `hf`'s split (data::hf_export_files) that [data] hf_streaming reads. Throws sdk::ConfigError
/// naming the key, file, line and value without [data] tokenizer_path and for an export that cannot be read (a hub id,
/// Parquet, Arrow, no file of the split).
std::vector<std::filesystem::path> hf_export_inputs(const config::JobConfig& job, const config::HfExport& hf);

/// The token cache of `hf`: <cache>/hf/<name>[-<config>]-<split>-<key>, where <cache> is
/// $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge, and <key> is
/// data::hf_cache_key of the export's files, [data] tokenizer_path, the text field and the split.
/// Its train/ holds the shards and metadata.json what prepare-data recorded. A missing cache is
/// written by the group's rank 0 (every core; the log names it; Arrow files through a JSON Lines copy of
/// their text column, null values skipped, beside the cache while it is written) and read by every rank
/// after the barrier; nullopt when it is missing and `group` is empty. Throws sdk::ConfigError naming the key,
/// file, line and value without [data] tokenizer_path and for an export that cannot be read (a hub
/// id, Parquet, no file of the split).
std::optional<ShardDir> hf_shards(const config::JobConfig& job, const config::HfExport& hf, const HfCacheGroup& group);

}  // namespace kforge::feed
