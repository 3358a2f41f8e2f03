// Minimal .npy reading and writing for exchanging tensors with the python3-torch oracle.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>

namespace kforge::test {

/// Writes a contiguous float32, float64 or int64 tensor as .npy (C order, little endian).
void write_npy(const std::filesystem::path& path, const at::Tensor& tensor);

/// Reads a .npy file of dtype <f4, <f8 or <i8 into a tensor of that dtype.
at::Tensor read_npy(const std::filesystem::path& path);

}  // namespace kforge::test
