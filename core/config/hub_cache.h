// hub_cache: resolves Hugging Face hub ids to their snapshots in the local hub cache, offline.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kforge::config {

struct JobConfig;

/// A Hugging Face cache directory and how it was found, for messages ("$HF_HUB_CACHE", "$HF_HOME/datasets", ...).
struct HfCacheDir {
  std::filesystem::path path;
  std::string origin;
};

/// The hub cache directory, as huggingface_hub finds it: $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else
/// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
HfCacheDir hub_cache();
std::filesystem::path hub_cache_dir();  ///< hub_cache().path

/// The `datasets` library's cache directory, as it finds it: $HF_DATASETS_CACHE, else $HF_HOME/datasets, else
/// $XDG_CACHE_HOME/huggingface/datasets, else ~/.cache/huggingface/datasets.
HfCacheDir datasets_cache();

/// Whether `value` is spelled as a hub model id: NAME or ORG/NAME (letters, digits, '-', '_', '.'; no "--" or
/// ".."), optionally followed by @REVISION; a name ending in a file extension (.model, .json, .tiktoken, ...) is a
/// file name, not an id.
bool is_hub_id(const std::string& value);

/// The snapshot directory of the hub model `id` (ORG/NAME[@REVISION], REVISION default "main") in the cache:
/// models--ORG--NAME/refs/REVISION holds a commit hash naming snapshots/HASH/; a REVISION that is a commit hash
/// names its snapshot directly. Never touches the network. Throws sdk::ConfigError naming the paths looked for
/// and the `huggingface-cli download` that fills them; `what` ("[data] tokenizer_path") begins the message.
std::filesystem::path hub_snapshot(const std::string& id, const std::string& what);

/// The snapshot directory of hub repo `value` (ORG/NAME[@REVISION]) of `kind` ("model": models--ORG--NAME,
/// "dataset": datasets--ORG--NAME), resolved as hub_snapshot() does; nullopt when the cache lacks it, with what was
/// looked for (the path, and the snapshots there) in `looked_for`.
std::optional<std::filesystem::path> find_hub_snapshot(const std::string& kind, const std::string& value,
                                                       std::string& looked_for);

/// `value` as a local path: itself when it exists (a local path wins over a hub id), else the snapshot of the hub
/// id it spells (hub_snapshot); a value that is neither is returned unchanged, for its user to report.
std::filesystem::path local_or_hub_path(const std::string& value, const std::string& what);

/// The tokenizer file `value` names: an existing file; else, in a directory (local or a hub snapshot),
/// tokenizer.json, else tokenizer.model, else original/tokenizer.model, else its one *.tiktoken file. Throws
/// sdk::ConfigError naming the directory's files when it holds none of these.
std::filesystem::path tokenizer_file(const std::string& value, const std::string& what);

/// Rewrites the keys that name a tokenizer or a model in `job` (tree and typed fields) to local paths: [data]
/// tokenizer_path to tokenizer_file(), [vision_encoder] path to local_or_hub_path(). The commands that run or load
/// a model call it after load_job_config, which keeps values as written.
void resolve_hub_ids(JobConfig& job);

}  // namespace kforge::config
