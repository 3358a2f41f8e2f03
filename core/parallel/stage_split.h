// Stage split: which of a model's blocks each pipeline virtual stage runs ([distributed] pp, pp_layer_split).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::parallel {

/// The blocks of virtual stage v are [first[v], first[v + 1]). `stages` = pp x the schedule's chunks per rank.
struct StageSplit {
  std::vector<int64_t> first;  ///< stages + 1 entries, from 0 to the block count

  int stages() const { return static_cast<int>(first.size()) - 1; }
  int64_t begin(int stage) const { return first[static_cast<size_t>(stage)]; }
  int64_t end(int stage) const { return first[static_cast<size_t>(stage) + 1]; }
  /// "layers 0-3 | 4-7" style: every stage's blocks, for logs.
  std::string describe() const;
};

/// `blocks` split over `stages` virtual stages: `given` ([distributed] pp_layer_split) when not empty, else evenly with
/// the earlier stages taking the remainder (KempnerForge's compute_layer_assignment). Throws sdk::ConfigError naming
/// the keys when a stage would get no block or `given` does not have `stages` positive entries adding up to `blocks`.
StageSplit split_stages(int64_t blocks, int stages, const std::vector<int64_t>& given);

}  // namespace kforge::parallel
