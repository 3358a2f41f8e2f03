// Fuzz target: an Arrow IPC stream (core/data/arrow_stream) read for its "text" column, the input being the whole file.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "data/arrow_stream.h"
#include "kforge/sdk/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    kforge::data::read_arrow_texts(in, "fuzz.arrow", "text", [](std::string_view) {});
  } catch (const kforge::sdk::Error&) {
    // A refused stream is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
