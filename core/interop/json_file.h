// A JSON object file of a Hugging Face model directory (config.json, model.safetensors.index.json).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace kforge::interop {

/// The JSON object in `path`; throws sdk::ConfigError naming the file when it cannot be read, is not
/// JSON or is not an object.
nlohmann::json read_json_object(const std::filesystem::path& path);

}  // namespace kforge::interop
