// A cluster preset scaled down to a few ranks and a small shape, for the parallelism tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::test {

/// configs/train/<preset>.toml on `ranks` ranks with `layout` (its [distributed] scaled down) and a small shape with
/// `n_layers` blocks, 6 steps of 2 x 16 tokens: it trains as written otherwise, and its loss falls.
void expect_scaled_preset_trains(const std::string& preset, int ranks, const std::vector<std::string>& layout,
                                 int64_t n_layers);

}  // namespace kforge::test
