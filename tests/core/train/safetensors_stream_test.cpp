// The checkpoint writer streams safetensors files: the checksum is XXH3-64 as xxhsum computes it
// (streamed or in one piece), the file equals the in-memory encoding byte for byte, and decoding
// copies out only the tensors asked for.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checkpoint/checksum.h"
#include "checkpoint/safetensors.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"
#include "support/xxhsum.h"

namespace kforge::test {
namespace {

// Bytes that are not a repeating pattern within XXH3's 64-byte stripes.
std::string pseudo_random_bytes(size_t size) {
  std::string data(size, '\0');
  uint32_t x = 2463534242u;
  for (char& c : data) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x & 0xff);
  }
  return data;
}

TEST(Checksum, PublishedXxh3ValueOfTheEmptyInput) {
  EXPECT_EQ(checkpoint::checksum("", 0), 0x2D06800538D394C2ULL);  // xxHash's sanity table, seed 0
}

TEST(Checksum, HexIsTheSixteenLowerCaseDigitsXxhsumPrints) {
  EXPECT_EQ(checkpoint::checksum_hex(0x2D06800538D394C2ULL), "2d06800538d394c2");
  EXPECT_EQ(checkpoint::checksum_hex(0x1ULL), "0000000000000001");
}

// One length from each of XXH3's code paths (0, 1-3, 4-8, 9-16, 17-128, 129-240, long, several
// 1 KiB blocks), each written to a file that xxhsum reads on its own.
TEST(Checksum, EqualsXxhsumForEveryLengthClass) {
  ASSERT_TRUE(xxhsum_available()) << "xxhsum not on PATH (Debian package xxhash; run scripts/setup.sh)";
  const auto dir = temp_dir("xxh3");
  for (const size_t size : {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1000, 5000, 100003}) {
    const std::string data = pseudo_random_bytes(size);
    const auto path = dir / ("bytes-" + std::to_string(size));
    std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(size));
    EXPECT_EQ(checkpoint::checksum_hex(checkpoint::checksum(data.data(), size)), xxhsum_h3(path)) << size << " bytes";
  }
}

TEST(Checksum, PiecesOfAnyLengthGiveTheOnePieceValue) {
  const std::string data = pseudo_random_bytes(5000);
  const uint64_t whole = checkpoint::checksum(data.data(), data.size());
  for (const size_t piece : {1, 7, 63, 65, 255, 257, 1023, 1025, 4999}) {
    checkpoint::Checksum c;
    for (size_t at = 0; at < data.size(); at += piece) c.update(data.data() + at, std::min(piece, data.size() - at));
    ASSERT_EQ(c.value(), whole) << "pieces of " << piece << " bytes";
  }
  for (size_t a = 0; a <= 600; a += 13) {
    for (size_t b = a; b <= 600; b += 37) {
      checkpoint::Checksum c;
      c.update(data.data(), a);
      c.update(data.data() + a, b - a);
      c.update(data.data() + b, 600 - b);
      ASSERT_EQ(c.value(), checkpoint::checksum(data.data(), 600)) << "split at " << a << " and " << b;
    }
  }
}

TEST(Safetensors, StreamedFileEqualsTheEncodingAndItsChecksum) {
  const checkpoint::TensorMap tensors = {
      {"a", at::arange(10, at::kFloat).view({2, 5}).t()},  // not contiguous
      {"b", at::arange(3, at::kLong)},
      {"c", at::ones({3}, at::kBFloat16)},
      {"empty", at::zeros({0, 4})}};
  const auto path = temp_dir("safetensors") / "x.safetensors";
  const auto written = checkpoint::write_safetensors(path, tensors, {{"format", "test"}});
  std::ostringstream bytes;
  bytes << std::ifstream(path, std::ios::binary).rdbuf();
  const std::string encoded = checkpoint::encode_safetensors(tensors, {{"format", "test"}});
  EXPECT_EQ(bytes.str(), encoded);
  EXPECT_EQ(written.bytes, encoded.size());
  EXPECT_EQ(written.checksum, checkpoint::checksum(encoded.data(), encoded.size()));
  const auto decoded = checkpoint::decode_safetensors(bytes.str(), path.string());
  for (const auto& [name, t] : tensors) EXPECT_TRUE(at::equal(decoded.at(name), t)) << name;
}

TEST(Safetensors, DecodeCopiesOutOnlyTheWantedTensors) {
  const checkpoint::TensorMap tensors = {
      {"model/w", at::arange(6, at::kFloat).view({2, 3})},
      {"optimizer/w.exp_avg", at::ones({2, 3})},
      {"rng/torch_cpu", at::ones({4}, at::kByte)}};
  const std::string encoded = checkpoint::encode_safetensors(tensors);
  const auto decoded = checkpoint::decode_safetensors(
      encoded, "x.safetensors", [](const std::string& name) { return name.rfind("model/", 0) == 0; });
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_TRUE(at::equal(decoded.at("model/w"), tensors.at("model/w")));
  EXPECT_EQ(decoded.count("optimizer/w.exp_avg"), 0u);
}

TEST(Safetensors, UnwantedTensorsAreStillValidated) {
  const std::string encoded = checkpoint::encode_safetensors({{"a", at::ones({2})}, {"b", at::ones({8})}});
  try {
    checkpoint::decode_safetensors(encoded.substr(0, encoded.size() - 4), "x.safetensors",
                                   [](const std::string& name) { return name == "a"; });
    FAIL() << "a truncated file must be refused even when its damaged tensor is not wanted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("x.safetensors: not a valid safetensors file: tensor 'b' ends at byte"),
              std::string::npos)
        << e.what();
  }
}

TEST(Safetensors, OverlappingTensorsAreRefusedEvenWhenTheLastEndsAtTheEnd) {
  std::string encoded =
      checkpoint::encode_safetensors({{"a", at::ones({2})}, {"b", at::ones({4})}, {"c", at::ones({4})}});
  // b moved back 4 bytes: it overlaps a and leaves a hole before c, and every span keeps its size.
  const std::string b_span = "\"data_offsets\":[8,24]";
  const size_t at_b = encoded.find(b_span);
  ASSERT_NE(at_b, std::string::npos) << encoded.substr(0, 200);
  encoded.replace(at_b, b_span.size(), "\"data_offsets\":[4,20]");
  try {
    checkpoint::decode_safetensors(encoded, "x.safetensors");
    FAIL() << "a shard whose tensors overlap must be refused";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("x.safetensors: not a valid safetensors file: tensor 'b' starts at byte 4 of "
                                         "the data section, but the tensors before it end at 8 (overlap)"),
              std::string::npos)
        << e.what();
  }
}

// Found by the safetensors fuzz target: a header entry without a field, or with a field of the wrong
// type, escaped as a raw nlohmann exception instead of an error naming the file.
TEST(Safetensors, AHeaderEntryMissingAFieldOrMistypedIsAnErrorNamingTheFile) {
  const std::string encoded = checkpoint::encode_safetensors({{"a", at::ones({2})}});
  ASSERT_NE(encoded.find("\"dtype\""), std::string::npos) << encoded.substr(0, 100);
  for (const auto& [field, replacement] : {std::pair<std::string, std::string>{"\"dtype\"", "\"dtypx\""},
                                           {"\"shape\"", "\"shapx\""},
                                           {"\"data_offsets\"", "\"data_offsetx\""}}) {
    std::string damaged = encoded;
    damaged.replace(damaged.find(field), field.size(), replacement);  // same length: the header length holds
    try {
      checkpoint::decode_safetensors(damaged, "x.safetensors");
      ADD_FAILURE() << "a header entry without " << field << " must be refused";
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find("x.safetensors: not a valid safetensors file"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Safetensors, UnwritablePathIsAnErrorNamingIt) {
  const auto path = temp_dir("safetensors") / "missing-dir" / "x.safetensors";
  try {
    checkpoint::write_safetensors(path, {{"a", at::ones({2})}});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test
