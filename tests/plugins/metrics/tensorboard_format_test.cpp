// The pieces of the TensorBoard writer, byte by byte: CRC-32C against published vectors (RFC 3720
// B.4), the protobuf wire encoding against the protobuf documentation's examples, and TFRecord framing
// against a record framed by the independent Python reader's CRC code.
#include <gtest/gtest.h>

#include <string>

#include "crc32c.h"
#include "proto_wire.h"
#include "tensorboard_events.h"
#include "tfrecord.h"

namespace kforge::builtin::metrics {
namespace {

using namespace std::string_literals;

TEST(TensorboardFormat, Crc32cMatchesKnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

TEST(TensorboardFormat, MaskedCrcRotatesAndAddsTheTfRecordConstant) {
  // ((0xE3069283 >> 15) | (0xE3069283 << 17)) + 0xa282ead8, modulo 2^32.
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
}

TEST(TensorboardFormat, ProtoWriterEncodesEveryWireType) {
  EXPECT_EQ(ProtoWriter().varint(1, 150).str(), "\x08\x96\x01"s);  // the protobuf encoding guide's example
  EXPECT_EQ(ProtoWriter().bytes(2, "testing").str(), "\x12\x07testing"s);
  EXPECT_EQ(ProtoWriter().varint(2, static_cast<uint64_t>(int64_t{-1})).str(),
            "\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"s);  // a negative int64: ten bytes
  EXPECT_EQ(ProtoWriter().fixed64(1, 1.0).str(), "\x09\x00\x00\x00\x00\x00\x00\xf0\x3f"s);
  EXPECT_EQ(ProtoWriter().fixed32(2, 1.0f).str(), "\x15\x00\x00\x80\x3f"s);
  EXPECT_EQ(ProtoWriter().varint(16, 1).str(), "\x80\x01\x01"s);  // field 16: a two-byte tag
  EXPECT_EQ(ProtoWriter().message(3, ProtoWriter().varint(1, 150)).str(), "\x1a\x03\x08\x96\x01"s);
  EXPECT_EQ(ProtoWriter().bytes(1, std::string(200, 'x')).str().substr(0, 3), "\x0a\xc8\x01"s);  // length 200
}

TEST(TensorboardFormat, ProtoFieldsReadBackAndTruncationIsAnError) {
  const std::string message = ProtoWriter().fixed64(1, 2.5).varint(2, 7).bytes(3, "abc").fixed32(4, 0.5f).str();
  const auto fields = read_proto_fields(message);
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[1].number, 2u);
  EXPECT_EQ(fields[1].value, 7u);
  EXPECT_EQ(fields[2].bytes, "abc");
  EXPECT_EQ(fields[3].wire_type, 5u);
  EXPECT_THROW(read_proto_fields(message.substr(0, message.size() - 1)), sdk::Error);
  EXPECT_THROW(read_proto_fields("\x1a\x05"
                                 "ab"s),
               sdk::Error);  // a length past the end
  EXPECT_EQ(event_step(message), 7);
  EXPECT_EQ(event_step(file_version_event(1.0)), 0);
}

TEST(TensorboardFormat, TfRecordFramesLengthDataAndMaskedCrcs) {
  EXPECT_EQ(tfrecord("abc"),
            "\x03\x00\x00\x00\x00\x00\x00\x00\xb0\x99\x49\x0e"
            "abc"
            "\x6e\x57\xf1\x21"s);
}

TEST(TensorboardFormat, TfRecordReadingStopsAtATornOrCorruptRecord) {
  const std::string file = tfrecord("first") + tfrecord("second");
  auto read = read_tfrecords(file);
  EXPECT_TRUE(read.intact);
  EXPECT_EQ(read.records, (std::vector<std::string>{"first", "second"}));
  read = read_tfrecords(file.substr(0, file.size() - 3));  // torn by a crash
  EXPECT_FALSE(read.intact);
  EXPECT_EQ(read.records, (std::vector<std::string>{"first"}));
  std::string corrupt = file;
  corrupt[tfrecord("first").size() + 13] ^= 1;  // a bit of "second"
  read = read_tfrecords(corrupt);
  EXPECT_FALSE(read.intact);
  EXPECT_EQ(read.records.size(), 1u);
}

}  // namespace
}  // namespace kforge::builtin::metrics
