// Comparing a checkpoint written by a parallel layout with one rank's: the same logical tensors.
#pragma once

#include <filesystem>

namespace kforge::test {

/// The checkpoints at `a` and `b` hold the same model tensors (names, shapes, values within `tolerance`) and the same
/// optimizer entries (names and shapes): what a sharded layout writes equals what one rank writes.
void expect_same_logical_tensors(const std::filesystem::path& a, const std::filesystem::path& b, double tolerance);

}  // namespace kforge::test
