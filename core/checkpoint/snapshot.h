// Snapshot: everything one checkpoint holds, in memory (what save writes and load returns).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"

namespace kforge::checkpoint {

/// Bumped when the on-disk layout or the meaning of a field changes; load refuses any other one.
/// 2: files' checksums are XXH3-64 ("xxh3", as `xxhsum -H3` prints them); 1 had an FNV variant.
inline constexpr int kSchemaVersion = 2;

/// Where a tensor a rank writes lies inside the whole tensor (FSDP shards).
struct Placement {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offsets;  ///< of this slice's first element, per dimension
};

struct Snapshot {
  int64_t step = 0;
  int64_t tokens_seen = 0;
  TensorMap model;            ///< parameter FQN -> tensor
  TensorMap optimizer;        ///< the optimizer's state_dict (keyed by parameter name)
  at::Tensor rng;             ///< torch CPU generator state (uint8)
  at::Tensor rng_cuda;        ///< this rank's CUDA generator state (uint8) in a CUDA run, else undefined
  nlohmann::json train_state; ///< data positions, scheduler step, NaN counters, ...
  std::string config_toml;    ///< the resolved config of the run that wrote it
  nlohmann::json plugins;     ///< [{file, name, version}] of the plugin set
  /// Slices among model/optimizer, keyed "model/<fqn>" or "optimizer/<key>"; any other tensor
  /// is whole. Load assembles every tensor whole again, whatever the number of ranks.
  std::map<std::string, Placement> placements;
};

}  // namespace kforge::checkpoint
