// Fuzz target: CSV text as the WebVid dataset reads its partitions (plugins/video/csv_reader), every record of it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kforge/sdk/error.h"
#include "video/csv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kforge::video::CsvReader reader({reinterpret_cast<const char*>(data), size}, "fuzz.csv");
  kforge::video::CsvRecord record;
  try {
    while (reader.next(record)) {
    }
  } catch (const kforge::sdk::Error&) {
    // An unclosed quote is the documented refusal; any other exception escapes as a finding.
  }
  return 0;
}
