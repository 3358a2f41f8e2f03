// TFRecord framing (see tfrecord.h).
#include "tfrecord.h"

#include <cstdint>

#include "crc32c.h"

namespace kforge::builtin::metrics {
namespace {

void tfrecord_put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

uint64_t tfrecord_get_le(std::string_view in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

}  // namespace

std::string tfrecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  tfrecord_put_le(out, data.size(), 8);
  tfrecord_put_le(out, masked_crc32c(std::string_view(out.data(), 8)), 4);
  out.append(data);
  tfrecord_put_le(out, masked_crc32c(data), 4);
  return out;
}

TfRecords read_tfrecords(std::string_view file) {
  TfRecords out;
  size_t pos = 0;
  while (pos < file.size()) {
    const std::string_view rest = file.substr(pos);
    if (rest.size() < 16 || tfrecord_get_le(rest.substr(8), 4) != masked_crc32c(rest.substr(0, 8))) break;
    const uint64_t length = tfrecord_get_le(rest, 8);
    if (length > rest.size() - 16) break;
    const std::string_view data = rest.substr(12, length);
    if (tfrecord_get_le(rest.substr(12 + length), 4) != masked_crc32c(data)) break;
    out.records.emplace_back(data);
    pos += 16 + length;
  }
  out.intact = pos == file.size();
  return out;
}

}  // namespace kforge::builtin::metrics
