// The parameters a model-parallel group's ranks each hold whole, compared byte for byte between the ranks (written
// after every step by the fixture hook in parameter_dump_plugin.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::test {

/// Overrides that load the fixture hook, which writes each rank's parameters and buffers under `dir` after every step.
std::vector<std::string> dumping_parameters(const std::filesystem::path& dir);

/// Of what the hook wrote under `dir`, every tensor that each of `ranks` holds whole (as many bytes as the logical
/// tensor of that name in `checkpoint`, written at the same step) is bit-identical on all of them; every tensor is one
/// the checkpoint holds. Returns the names compared.
std::vector<std::string> expect_whole_tensors_identical(const std::filesystem::path& dir, const std::vector<int>& ranks,
                                                        const std::filesystem::path& checkpoint);

}  // namespace kforge::test
