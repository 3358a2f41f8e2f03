// Import: a Hugging Face Llama/Mixtral directory as a kforge checkpoint (step 0, weights only).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "plugins/registry.h"

namespace kforge::interop {

struct ImportOptions {
  std::vector<std::string> overrides;  ///< extra --section.key=value for the checkpoint's config
  std::function<void(const std::string&)> progress = [](const std::string&) {};
};

/// Reads dir/config.json and its safetensors weights, builds the [model] config kforge's transformer
/// needs for them (plus `overrides`), checks every parameter of that model against the weights, and
/// writes out/step_0 through the checkpoint layer (model tensors in float32, no optimizer state, a
/// fresh data position; `latest` points at it). Copies dir/tokenizer.model, when present, to
/// out/tokenizer.model and sets data.tokenizer_path to it. `out` must be empty or absent. Returns
/// out/step_0. Throws sdk::ConfigError naming the file and the tensor or field at fault.
std::filesystem::path import_hf(const std::filesystem::path& dir, const std::filesystem::path& out,
                                const plugins::Registry& registry, const ImportOptions& options);

}  // namespace kforge::interop
