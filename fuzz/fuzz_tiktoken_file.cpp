// Fuzz target: a tiktoken rank file (core/data/tiktoken_file), the input being the whole file.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "data/tiktoken_file.h"
#include "kforge/sdk/error.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = kforge::fuzz::scratch_dir() / "fuzz.tiktoken";
  kforge::fuzz::write_bytes(file, data, size);
  kforge::data::looks_like_tiktoken_file(file);
  try {
    kforge::data::load_tiktoken_file(file);
  } catch (const kforge::sdk::Error&) {
    // A refused file is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
