// Fuzz target: a Hugging Face config.json as kforge import reads it (core/interop/hf_architecture's read_hf_config),
// and the [model] overrides and config.json written back from what it accepted. Input: the config.json text.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "interop/hf_architecture.h"
#include "kforge/sdk/error.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = kforge::fuzz::scratch_dir() / "config.json";
  kforge::fuzz::write_bytes(file, data, size);
  try {
    const kforge::interop::HfArchitecture arch = kforge::interop::read_hf_config(file);
    kforge::interop::model_overrides(arch);
    kforge::interop::hf_config_json(arch, "float32", 1, 2).dump();
  } catch (const kforge::sdk::Error&) {
    // A refused file (ConfigError) is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
