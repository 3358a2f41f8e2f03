// data::NpzWriter read back by numpy (tests/oracles/read_npz.py): dtypes, shapes (0-d, empty, N-d),
// dotted names, byte-identical output for the same arrays; and the errors that name the file.
#include "data/npz_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "kforge/sdk/error.h"
#include "support/oracle.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

void write_sample(const std::filesystem::path& file) {
  const std::vector<float> matrix = {1.5f, -2.0f, 0.25f, 3e-8f, 1e30f, -0.0f};
  const std::vector<int64_t> ids = {7, -1, 1LL << 40};
  const double scalar = 0.1;
  data::NpzWriter npz(file);
  npz.add("layers.0.residual", "<f4", sizeof(float), {1, 2, 3}, matrix.data(), matrix.size() * sizeof(float));
  npz.add("tokens", "<i8", sizeof(int64_t), {3}, ids.data(), ids.size() * sizeof(int64_t));
  npz.add("scalar", "<f8", sizeof(double), {}, &scalar, sizeof(double));
  npz.add("empty", "<f4", sizeof(float), {0, 5}, nullptr, 0);
  npz.close();
}

TEST(NpzWriter, NumpyReadsEveryArrayWithItsDtypeShapeAndValues) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with numpy is required";
  const auto dir = temp_dir("npz_writer");
  write_sample(dir / "a.npz");
  std::string out;
  ASSERT_EQ(run_oracle("read_npz.py", {(dir / "a.npz").string()}, &out), 0) << out;
  const auto npz = nlohmann::json::parse(out);
  EXPECT_EQ(npz.size(), 4u);
  EXPECT_EQ(npz["layers.0.residual"]["dtype"], "float32");
  EXPECT_EQ(npz["layers.0.residual"]["shape"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(npz["layers.0.residual"]["values"].get<std::vector<float>>(),
            (std::vector<float>{1.5f, -2.0f, 0.25f, 3e-8f, 1e30f, -0.0f}));
  EXPECT_EQ(npz["tokens"]["dtype"], "int64");
  EXPECT_EQ(npz["tokens"]["values"], nlohmann::json({7, -1, 1LL << 40}));
  EXPECT_EQ(npz["scalar"]["shape"], nlohmann::json::array());
  EXPECT_EQ(npz["scalar"]["values"], nlohmann::json({0.1}));
  EXPECT_EQ(npz["empty"]["shape"], nlohmann::json({0, 5}));
  // No timestamps: the same arrays make the same bytes.
  write_sample(dir / "b.npz");
  EXPECT_EQ(read_file(dir / "a.npz"), read_file(dir / "b.npz"));
  std::filesystem::remove_all(dir);
}

TEST(NpzWriter, ErrorsNameTheFileAndTheArray) {
  const auto dir = temp_dir("npz_writer_errors");
  try {
    data::NpzWriter npz(dir / "no" / "such" / "dir.npz");
    FAIL() << "created a file in a missing directory";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "no" / "such" / "dir.npz").string()), std::string::npos) << e.what();
  }
  data::NpzWriter npz(dir / "c.npz");
  const std::vector<float> values(5);
  try {
    npz.add("layers.1.attn_out", "<f4", sizeof(float), {2, 3}, values.data(), values.size() * sizeof(float));
    FAIL() << "accepted 5 values for a 2 x 3 array";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("array 'layers.1.attn_out' has 20 bytes, not the 24 of its shape (2, 3)"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge::test
