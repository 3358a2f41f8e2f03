// Fuzz target: an Arrow IPC stream (core/data/arrow_stream) read for its "text" column, and row by row for an Image
// struct's children ("image.bytes" binary, "image.path" text) beside it, the input being the whole file.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "data/arrow_stream.h"
#include "kforge/sdk/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::istringstream texts(bytes);
  try {
    kforge::data::read_arrow_texts(texts, "fuzz.arrow", "text", [](std::string_view) {});
  } catch (const kforge::sdk::Error&) {
    // A refused stream is the documented outcome; any other exception escapes as a finding.
  }
  namespace arrow = kforge::data;
  std::istringstream rows(bytes);
  const std::vector<arrow::ArrowColumn> columns = {{"image.bytes", arrow::ArrowKind::binary},
                                                   {"image.path", arrow::ArrowKind::text},
                                                   {"text", arrow::ArrowKind::text}};
  try {
    arrow::read_arrow_rows(rows, "fuzz.arrow", columns, [&](int64_t, const std::vector<arrow::ArrowCell>& c) {
      // A located value lies inside the input.
      if (!c[0].null && (c[0].file_offset > size || c[0].size > size - c[0].file_offset)) __builtin_trap();
    });
  } catch (const kforge::sdk::Error&) {
    // As above.
  }
  return 0;
}
