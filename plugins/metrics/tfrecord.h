// TFRecord framing, the container of TensorBoard event files: per record a little-endian uint64
// length, the masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::builtin::metrics {

/// One framed record around `data`.
std::string tfrecord(std::string_view data);

/// The records of a file's bytes, up to the first one that is torn (a crash mid-write) or whose
/// CRCs do not match; `intact` says whether the whole input was read.
struct TfRecords {
  std::vector<std::string> records;
  bool intact = true;
};
TfRecords read_tfrecords(std::string_view file);

}  // namespace kforge::builtin::metrics
