// The checkpoint writer streams safetensors files: the streamed checksum equals the one-piece one
// (and FNV-1a's published value), and the file equals the in-memory encoding byte for byte.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>
#include <sstream>

#include "checkpoint/checksum.h"
#include "checkpoint/safetensors.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

TEST(Checksum, KnownFnv1aValuesForShortInputs) {
  EXPECT_EQ(checkpoint::checksum("", 0), 0xcbf29ce484222325ULL);  // the offset basis
  EXPECT_EQ(checkpoint::checksum("a", 1), 0xaf63dc4c8601ec8cULL);  // FNV-1a 64 of "a"
}

TEST(Checksum, PiecesOfAnyLengthGiveTheOnePieceValue) {
  std::string data;
  for (int i = 0; i < 37; ++i) data += static_cast<char>(i * 29 + 3);
  const uint64_t whole = checkpoint::checksum(data.data(), data.size());
  for (size_t a = 0; a <= data.size(); ++a) {
    for (size_t b = a; b <= data.size(); b += 5) {
      checkpoint::Checksum c;
      c.update(data.data(), a);
      c.update(data.data() + a, b - a);
      c.update(data.data() + b, data.size() - b);
      ASSERT_EQ(c.value(), whole) << "split at " << a << " and " << b;
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
