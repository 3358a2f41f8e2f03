// CheckpointManager: step_N/ directories written atomically, `latest` moved last, retention,
// and resume from the newest complete checkpoint (a damaged one is refused, naming the file).
//
// Layout of checkpoint.dir/step_N/ (schema 1):
//   metadata.json                        format, schema version, step, every file's size and checksum,
//                                        each tensor's global shape and shard placement, plugin set
//   shard-00000-of-00001.safetensors     model/<fqn>, optimizer/<key>, rng/torch_cpu (one per rank)
//   train_state.json                     step, tokens, data position per rank, scheduler, NaN counters
//   config.toml                          the resolved config
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/snapshot.h"

namespace kforge::checkpoint {

class CheckpointManager {
 public:
  /// keep_last_n <= 0 keeps everything; is_milestone(step) marks checkpoints never pruned.
  CheckpointManager(std::filesystem::path dir, int64_t keep_last_n, std::function<bool(int64_t)> is_milestone);

  /// Writes step_<snapshot.step> under a temporary name, syncs it, renames it into place, then
  /// points `latest` at it and prunes old checkpoints. Returns the checkpoint directory.
  std::filesystem::path save(const Snapshot& snapshot);

  /// Loads the newest complete checkpoint: `latest` first, then step_* from newest to oldest.
  /// Each damaged candidate is reported through `warn` (naming the file) and skipped. Returns
  /// nullopt when the directory holds no checkpoint; throws sdk::Error when checkpoints exist but
  /// none is complete (never silently starts from scratch).
  std::optional<Snapshot> load_newest(const std::function<void(const std::string&)>& warn) const;

  /// Loads one checkpoint directory; throws sdk::Error naming the missing, truncated or
  /// corrupted file.
  static Snapshot load(const std::filesystem::path& step_dir);

  /// step_<N> directories present, sorted by N ascending.
  std::vector<std::pair<int64_t, std::filesystem::path>> list() const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  void prune() const;
  std::filesystem::path dir_;
  int64_t keep_last_n_;
  std::function<bool(int64_t)> is_milestone_;
};

}  // namespace kforge::checkpoint
