// The vision oracles' files for the tests: tests/oracles/vit_towers.py and vision_adapters.py run once per
// test process into a temp directory, their safetensors read back, and the float32 closeness rule.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <string>

namespace kforge::test {

/// The directory `script` (in tests/oracles/, taking the directory as its one argument) wrote; the
/// script runs on the first call only. Fails the test (ADD_FAILURE) and returns an empty path when
/// python3-torch or the script fails.
std::filesystem::path vision_oracle_dir(const std::string& script);

/// Every tensor of a safetensors file, by name (read with the host's decoder).
std::map<std::string, at::Tensor> read_tensors(const std::filesystem::path& file);

/// EXPECT: max|got - want| <= 1e-5 * max(1, max|want|), naming `what`.
///
/// Why 1e-5 bounds float32 here: both sides evaluate the same float32 operations, in orders that may
/// differ (a convolution against a GEMM, other reduction orders). A dot product of length K has error
/// at most K u sum|a_i b_i| (u = 2^-24 = 6e-8); the longest reductions in these tiny models are K <= 48,
/// so each is within 3e-6 of its magnitudes, LayerNorm and softmax stay well conditioned at these scales
/// (unit-variance inputs, weights ~ N(0, 1/fan_in)), and two layers compose a few such errors, which
/// keeps the worst case under 1e-5 relative to the tensor's largest entry (observed: at most 7e-7).
void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what);

}  // namespace kforge::test
