// Export: a kforge transformer's weights and config as a Hugging Face Llama/Mixtral directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "checkpoint/safetensors.h"
#include "config/job_config.h"
#include "interop/hf_weight_files.h"
#include "plugins/registry.h"

namespace kforge::interop {

struct ExportOptions {
  std::string dtype;  ///< "float32", "bfloat16" or "float16"; empty: the job's checkpoint.export_dtype
  int64_t max_shard_bytes = kDefaultMaxShardBytes;
  std::function<void(const std::string&)> progress = [](const std::string&) {};
};

/// Writes into `out` (created; refused when it exists and is not empty) config.json,
/// generation_config.json, the weights (hf_weight_files.h) in the export dtype under Hugging Face
/// names (packed experts unpacked), and, when the job names a data.tokenizer_path, tokenizer.model
/// and tokenizer_config.json. `model` holds the whole tensors by kforge FQN (any world size's
/// checkpoint, assembled). Throws sdk::ConfigError naming the [model] key the format cannot
/// express, sdk::Error naming a tensor with no Hugging Face name or a file that cannot be written.
void export_hf(const plugins::Registry& registry, const config::JobConfig& job, const checkpoint::TensorMap& model,
               const std::filesystem::path& out, const ExportOptions& options);

}  // namespace kforge::interop
