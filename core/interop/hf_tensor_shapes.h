// The tensors a Hugging Face Llama/Mixtral directory must hold for its config.json, from the config's sizes alone
// (int64, overflow-checked), so that an import checks the weights before it builds, and allocates, the model.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "interop/hf_architecture.h"

namespace kforge::interop {

/// Checks `shapes` (by kforge name, from dir's safetensors headers) against the tensors kforge's transformer
/// has for `arch`, in the model's order: each there with its shape, and no other. Throws sdk::ConfigError naming
/// the Hugging Face tensor with the shape it has and the shape config.json's keys give it, or naming those keys
/// when the parameter count or its float32 bytes do not fit in int64. Reads no more of the config's tensors than
/// `shapes` holds, however large the config's sizes.
void check_hf_tensor_shapes(const HfArchitecture& arch, const std::map<std::string, std::vector<int64_t>>& shapes,
                            const std::filesystem::path& dir);

}  // namespace kforge::interop
