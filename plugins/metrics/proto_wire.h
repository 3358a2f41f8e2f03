// The few protocol-buffer wire-format pieces the TensorBoard writer needs, encoded by hand: varints,
// 64- and 32-bit fixed fields, length-delimited fields; and a reader of a message's top-level fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::builtin::metrics {

/// Appends fields to one message; nested messages are written with message(field, inner).
class ProtoWriter {
 public:
  ProtoWriter& varint(uint32_t field, uint64_t value);  ///< wire type 0: uint64, int64 (two's complement), bool, enum
  ProtoWriter& fixed64(uint32_t field, double value);   ///< wire type 1: double
  ProtoWriter& fixed32(uint32_t field, float value);    ///< wire type 5: float
  ProtoWriter& bytes(uint32_t field, std::string_view value);  ///< wire type 2: string, bytes
  ProtoWriter& message(uint32_t field, const ProtoWriter& inner) { return bytes(field, inner.str()); }
  const std::string& str() const { return out_; }

 private:
  void tag(uint32_t field, uint32_t wire_type);
  void raw_varint(uint64_t value);
  std::string out_;
};

/// One top-level field as read: `value` holds a varint or a fixed field's bits, `bytes` a
/// length-delimited field's payload (a view into the parsed message).
struct ProtoField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t value = 0;
  std::string_view bytes;
};

/// The top-level fields of `message`, in order; throws sdk::Error on a truncated or unknown wire type.
std::vector<ProtoField> read_proto_fields(std::string_view message);

}  // namespace kforge::builtin::metrics
