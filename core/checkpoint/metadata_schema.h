// The JSON files of a step directory checked field by field before anything is read from them:
// any defect (missing field, wrong type, a value the other files contradict) is an sdk::Error
// naming the file and the field, so a damaged checkpoint is skipped like a corrupted shard.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

namespace kforge::checkpoint {

/// `bytes` parsed as a JSON object; throws naming `path` when they are not one.
nlohmann::json parse_json_object(std::string_view bytes, const std::filesystem::path& path);

/// metadata.json (after its schema version was accepted): format, step, tokens_seen, world_size,
/// plugins, files {name: {bytes, xxh3}} and the tensor index {key: {global_shape, shards}}.
void check_metadata(const nlohmann::json& meta, const std::filesystem::path& path);

/// commit.json's entry for metadata.json ({"bytes", "xxh3"}).
void check_file_entry(const nlohmann::json& entry, const std::string& name, const std::filesystem::path& path);

/// train_state.json: step and tokens_seen equal to metadata.json's, one data position per rank
/// ({epoch, batches_yielded} integers), integer counters where present.
void check_train_state(const nlohmann::json& state, const nlohmann::json& meta, const std::filesystem::path& path);

}  // namespace kforge::checkpoint
