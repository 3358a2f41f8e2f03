// The vision oracles' files: run once, read back, compared within float32's bound.
#include "plugins/vision/vision_oracle.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "checkpoint/safetensors.h"
#include "support/max_abs_diff.h"
#include "support/oracle.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {

std::filesystem::path vision_oracle_dir(const std::string& script) {
  static std::mutex mutex;
  static std::map<std::string, std::filesystem::path> done;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = done.find(script);
  if (it != done.end()) return it->second;
  if (!oracle_available()) {
    ADD_FAILURE() << "/usr/bin/python3 with torch and numpy is the vision oracle";
    return {};
  }
  const auto dir = temp_dir("vision_oracle");
  std::string output;
  if (run_oracle(script, {dir.string()}, &output) != 0) {
    ADD_FAILURE() << script << " failed:\n" << output;
    return {};
  }
  return done[script] = dir;
}

std::map<std::string, at::Tensor> read_tensors(const std::filesystem::path& file) {
  return checkpoint::decode_safetensors(read_file(file), file.string());
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what << ": no tensor";
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double scale = std::max(1.0, want.abs().max().item<double>());
  EXPECT_LE(max_abs_diff(got, want), 1e-5 * scale) << what << " (largest |reference| " << scale << ")";
}

}  // namespace kforge::test
