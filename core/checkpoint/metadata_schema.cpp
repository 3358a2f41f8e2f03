// Field-by-field checks of metadata.json, commit.json and train_state.json.
#include "checkpoint/metadata_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "kforge/sdk/error.h"

namespace kforge::checkpoint {
namespace fs = std::filesystem;
namespace {

sdk::Error schema_error(const fs::path& path, const std::string& field, const std::string& what) {
  return sdk::Error(fmt::format("{}: '{}' {}; the checkpoint is damaged", path.string(), field, what));
}

const nlohmann::json& field(const nlohmann::json& object, const std::string& key, const std::string& where,
                            const fs::path& path) {
  if (!object.is_object() || !object.contains(key)) throw schema_error(path, where + key, "is missing");
  return object.at(key);
}

int64_t integer(const nlohmann::json& object, const std::string& key, const std::string& where, const fs::path& path,
                int64_t minimum = 0) {
  const nlohmann::json& v = field(object, key, where, path);
  if (!v.is_number_integer() || v.get<int64_t>() < minimum) {
    throw schema_error(path, where + key, fmt::format("is {}, not an integer >= {}", v.dump(), minimum));
  }
  return v.get<int64_t>();
}

void integer_list(const nlohmann::json& v, const std::string& name, const fs::path& path) {
  if (!v.is_array()) throw schema_error(path, name, fmt::format("is {}, not a list of integers", v.dump()));
  for (const auto& e : v) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0) {
      throw schema_error(path, name, fmt::format("is {}, not a list of integers >= 0", v.dump()));
    }
  }
}

}  // namespace

nlohmann::json parse_json_object(std::string_view bytes, const fs::path& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw sdk::Error(fmt::format("{}: not valid JSON ({}); the checkpoint is damaged", path.string(), e.what()));
  }
  if (!j.is_object()) throw sdk::Error(fmt::format("{}: not a JSON object; the checkpoint is damaged", path.string()));
  return j;
}

void check_file_entry(const nlohmann::json& entry, const std::string& name, const fs::path& path) {
  const std::string where = fmt::format("files.{}.", name);
  integer(entry, "bytes", where, path);
  const nlohmann::json& sum = field(entry, "xxh3", where, path);
  if (!sum.is_string() || sum.get<std::string>().size() != 16) {
    throw schema_error(path, where + "xxh3", fmt::format("is {}, not 16 hex digits", sum.dump()));
  }
}

void check_metadata(const nlohmann::json& meta, const fs::path& path) {
  integer(meta, "step", "", path);
  integer(meta, "tokens_seen", "", path);
  const int64_t world_size = integer(meta, "world_size", "", path, 1);
  if (const auto& plugins = field(meta, "plugins", "", path); !plugins.is_array()) {
    throw schema_error(path, "plugins", fmt::format("is {}, not a list", plugins.dump()));
  }
  const nlohmann::json& files = field(meta, "files", "", path);
  if (!files.is_object()) throw schema_error(path, "files", fmt::format("is {}, not an object", files.dump()));
  for (const auto& [name, entry] : files.items()) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      throw schema_error(path, "files", fmt::format("names '{}', not a file of the step directory", name));
    }
    check_file_entry(entry, name, path);
  }
  const nlohmann::json& tensors = field(meta, "tensors", "", path);
  if (!tensors.is_object()) throw schema_error(path, "tensors", fmt::format("is {}, not an object", tensors.dump()));
  for (const auto& [key, entry] : tensors.items()) {
    const std::string where = fmt::format("tensors.{}.", key);
    const nlohmann::json& shape = field(entry, "global_shape", where, path);
    integer_list(shape, where + "global_shape", path);
    const nlohmann::json& shards = field(entry, "shards", where, path);
    if (!shards.is_array() || shards.empty()) {
      throw schema_error(path, where + "shards", fmt::format("is {}, not a non-empty list", shards.dump()));
    }
    for (const auto& piece : shards) {
      const nlohmann::json& file = field(piece, "file", where + "shards[].", path);
      if (!file.is_string() || !files.contains(file.get<std::string>())) {
        throw schema_error(path, where + "shards[].file",
                           fmt::format("is {}, not a file listed in 'files'", file.dump()));
      }
      if (integer(piece, "rank", where + "shards[].", path) >= world_size) {
        throw schema_error(path, where + "shards[].rank", fmt::format("is not below world_size {}", world_size));
      }
      const nlohmann::json& offsets = field(piece, "offsets", where + "shards[].", path);
      integer_list(offsets, where + "shards[].offsets", path);
      if (offsets.size() != shape.size()) {
        throw schema_error(path, where + "shards[].offsets",
                           fmt::format("has {} entries for a {}-dimensional tensor", offsets.size(), shape.size()));
      }
    }
  }
}

void check_train_state(const nlohmann::json& state, const nlohmann::json& meta, const fs::path& path) {
  for (const char* key : {"step", "tokens_seen"}) {
    if (integer(state, key, "", path) != meta.at(key).get<int64_t>()) {
      throw schema_error(path, key,
                         fmt::format("is {} but metadata.json says {}", state.at(key).dump(), meta.at(key).dump()));
    }
  }
  const nlohmann::json& data = field(state, "data", "", path);
  if (!data.is_array() || static_cast<int64_t>(data.size()) != meta.at("world_size").get<int64_t>()) {
    throw schema_error(path, "data",
                       fmt::format("is not a list of one position per rank ({} ranks): {}",
                                   meta.at("world_size").get<int64_t>(), data.dump()));
  }
  for (const auto& position : data) {
    integer(position, "epoch", "data[].", path);
    integer(position, "batches_yielded", "data[].", path);
    if (position.contains("image_text_position")) integer(position, "image_text_position", "data[].", path);
  }
  for (const char* key : {"data_parallel_size", "batch_size"}) {
    if (state.contains(key)) integer(state, key, "", path, 1);
  }
  if (state.contains("skipped_steps")) integer(state, "skipped_steps", "", path);
  if (state.contains("nan")) {
    integer(state.at("nan"), "consecutive", "nan.", path);
    integer(state.at("nan"), "total", "nan.", path);
  }
  if (state.contains("weights_only") && !state.at("weights_only").is_boolean()) {
    throw schema_error(path, "weights_only", fmt::format("is {}, not true or false", state.at("weights_only").dump()));
  }
  if (state.contains("metric_runs")) {  // metric backend name -> the backend's run id
    const nlohmann::json& runs = state.at("metric_runs");
    const bool all_strings = runs.is_object() && std::all_of(runs.begin(), runs.end(),
                                                             [](const nlohmann::json& id) { return id.is_string(); });
    if (!all_strings) {
      throw schema_error(path, "metric_runs",
                         fmt::format("is {}, not a table of backend names to run ids", runs.dump()));
    }
  }
}

}  // namespace kforge::checkpoint
