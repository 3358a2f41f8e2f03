// Fuzz target: a torch.distributed.checkpoint `.metadata` pickle as `kforge convert --from dcp` reads it
// (core/interop/dcp_metadata's parse_dcp_metadata over the restricted pickle reader). Input: the file's bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "interop/dcp_metadata.h"
#include "kforge/sdk/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kforge::interop::parse_dcp_metadata(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const kforge::sdk::Error&) {
    // A refused file is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
