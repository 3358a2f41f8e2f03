// Fuzz target: a .npy token shard's header (plugins/data/npy_header), the input being the whole file.
#include <cstddef>
#include <cstdint>

#include "kforge/sdk/error.h"
#include "npy_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kforge::builtin::data::parse_npy_header("fuzz.npy", data, size);
  } catch (const kforge::sdk::Error&) {
    // A refused file is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
