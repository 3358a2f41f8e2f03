// Fuzz target: a safetensors file image (core/checkpoint/safetensors), every tensor and the metadata taken.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "checkpoint/safetensors.h"
#include "kforge/sdk/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> metadata;
  try {
    kforge::checkpoint::decode_safetensors(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", {},
                                           &metadata);
  } catch (const kforge::sdk::Error&) {
    // A refused file is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
