// Protocol-buffer wire format by hand (see proto_wire.h).
#include "proto_wire.h"

#include <cstring>

#include "kforge/sdk/error.h"

namespace kforge::builtin::metrics {
namespace {

// The bytes of `value` (a double or a float), little-endian.
template <class Bits, class T>
void append_little_endian(std::string& out, T value) {
  Bits bits;
  static_assert(sizeof(Bits) == sizeof(T));
  std::memcpy(&bits, &value, sizeof bits);
  for (size_t i = 0; i < sizeof(Bits); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFFu));
}

uint64_t read_proto_varint(std::string_view data, size_t& pos) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size()) throw sdk::Error("protobuf message: truncated varint at byte " + std::to_string(pos));
    const auto byte = static_cast<uint8_t>(data[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7Fu) << shift;
    if ((byte & 0x80u) == 0) return value;
  }
  throw sdk::Error("protobuf message: varint longer than 10 bytes at byte " + std::to_string(pos));
}

uint64_t read_proto_fixed(std::string_view data, size_t& pos, size_t width) {
  if (data.size() - pos < width)
    throw sdk::Error("protobuf message: truncated fixed field at byte " + std::to_string(pos));
  uint64_t bits = 0;
  for (size_t i = 0; i < width; ++i) bits |= static_cast<uint64_t>(static_cast<uint8_t>(data[pos + i])) << (8 * i);
  pos += width;
  return bits;
}

}  // namespace

void ProtoWriter::raw_varint(uint64_t value) {
  while (value >= 0x80u) {
    out_.push_back(static_cast<char>((value & 0x7Fu) | 0x80u));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtoWriter::tag(uint32_t field, uint32_t wire_type) {
  raw_varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

ProtoWriter& ProtoWriter::varint(uint32_t field, uint64_t value) {
  tag(field, 0);
  raw_varint(value);
  return *this;
}

ProtoWriter& ProtoWriter::fixed64(uint32_t field, double value) {
  tag(field, 1);
  append_little_endian<uint64_t>(out_, value);
  return *this;
}

ProtoWriter& ProtoWriter::fixed32(uint32_t field, float value) {
  tag(field, 5);
  append_little_endian<uint32_t>(out_, value);
  return *this;
}

ProtoWriter& ProtoWriter::bytes(uint32_t field, std::string_view value) {
  tag(field, 2);
  raw_varint(value.size());
  out_.append(value);
  return *this;
}

std::vector<ProtoField> read_proto_fields(std::string_view message) {
  std::vector<ProtoField> fields;
  size_t pos = 0;
  while (pos < message.size()) {
    const uint64_t key = read_proto_varint(message, pos);
    ProtoField f;
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire_type = static_cast<uint32_t>(key & 7u);
    switch (f.wire_type) {
      case 0:
        f.value = read_proto_varint(message, pos);
        break;
      case 1:
        f.value = read_proto_fixed(message, pos, 8);
        break;
      case 5:
        f.value = read_proto_fixed(message, pos, 4);
        break;
      case 2: {
        const uint64_t size = read_proto_varint(message, pos);
        if (size > message.size() - pos) {
          throw sdk::Error("protobuf message: field " + std::to_string(f.number) + " of " + std::to_string(size) +
                           " bytes runs past the end at byte " + std::to_string(pos));
        }
        f.bytes = message.substr(pos, size);
        pos += size;
        break;
      }
      default:
        throw sdk::Error("protobuf message: unsupported wire type " + std::to_string(f.wire_type) + " of field " +
                         std::to_string(f.number));
    }
    fields.push_back(f);
  }
  return fields;
}

}  // namespace kforge::builtin::metrics
