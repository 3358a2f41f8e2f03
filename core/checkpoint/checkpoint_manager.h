// CheckpointManager: step_N/ directories written atomically, `latest` moved last, retention,
// and resume from the newest complete checkpoint (a damaged one is refused, naming the file).
//
// Layout of checkpoint.dir/step_N/ (schema 3), written by W ranks together:
//   commit.json                          written last: metadata.json's size and XXH3 (seals it)
//   metadata.json                        format, schema version, step, world size, every file's size
//                                        and XXH3-64 ("xxh3": the hex `xxhsum -H3 FILE` prints), each
//                                        tensor's global shape and shard placement, plugin set
//   shard-0000R-of-0000W.safetensors     one per rank: rng/torch_cpu (and rng/torch_cuda in a CUDA run), and the
//                                        tensors that rank owns
//                                        (model/<fqn>, optimizer/<key>; all on rank 0 with pure DP,
//                                        row slices under FSDP, placed by the metadata's index)
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

/// The ranks that write one checkpoint together (defaults: a single process).
struct SaveGroup {
  int rank = 0, world_size = 1;
  /// Every rank's string, in rank order: a collective over a process group, which fails at once
  /// when a rank's process dies (a store wait would sit out the whole timeout).
  std::function<std::vector<std::string>(const std::string& value)> all_gather;
};

class CheckpointManager {
 public:
  /// keep_last_n <= 0 keeps everything; is_milestone(step) marks checkpoints never pruned.
  CheckpointManager(std::filesystem::path dir, int64_t keep_last_n, std::function<bool(int64_t)> is_milestone,
                    SaveGroup group = {});

  /// Collective over the group. Every rank writes and fsyncs its shard of step_<snapshot.step>
  /// (its own snapshot: tensors it owns, its RNG, its data position in train_state["data"][0])
  /// under a temporary name and reports it; once every rank's shard is durable, rank 0 writes
  /// train_state.json (every rank's position), metadata.json and commit.json, fsyncs them, renames
  /// the directory into place, points `latest` at it and prunes (passing the kFaultPoint* points of
  /// fault_points.h). Every rank returns once the checkpoint is committed, or throws sdk::Error
  /// (naming the rank, the path and strerror) when any rank failed: `latest` then still points at
  /// the previous complete checkpoint, and no complete checkpoint was removed. Returns the directory.
  std::filesystem::path save(const Snapshot& snapshot);

  /// Loads the checkpoint `latest` points at (the tensors `wanted` accepts, as load), as KempnerForge's auto-resume
  /// does, also one re-pointed to an older step (said through `warn`: it is older than the newest); but a step
  /// committed after `latest` was last moved comes first (a step directory only appears once complete; `latest` lags
  /// it when a run stops between the two). Then step_* from newest to oldest.
  /// Each damaged candidate (and a `latest` that leads nowhere) is reported through `warn` (naming the file) and
  /// skipped; one of another schema version ends the search with its IncompatibleCheckpoint. Returns nullopt when the
  /// directory holds no checkpoint; throws sdk::Error when checkpoints exist but none is complete (never silently
  /// starts from scratch).
  std::optional<Snapshot> load_newest(const std::function<void(const std::string&)>& warn,
                                      const TensorFilter& wanted = {}) const;

  /// Loads one checkpoint directory: maps its files, verifies metadata.json against commit.json and
  /// every other file against metadata.json (sizes, checksums, every field's type), then copies
  /// out the model and optimizer tensors `wanted` accepts by stored name ("model/<fqn>",
  /// "optimizer/<key>"; all when empty), whole (slices assembled whatever the number of ranks that
  /// wrote them), and `rank`'s RNG (rank 0's when the checkpoint has fewer ranks). Throws
  /// IncompatibleCheckpoint for another schema version, sdk::Error naming the missing, truncated,
  /// corrupted or malformed file.
  static Snapshot load(const std::filesystem::path& step_dir, int rank = 0, const TensorFilter& wanted = {});

  /// step_<N> directories present, sorted by N ascending.
  std::vector<std::pair<int64_t, std::filesystem::path>> list() const;

  const std::filesystem::path& dir() const { return dir_; }

  /// A TensorFilter for the model's tensors alone (what generate and eval need).
  static bool model_tensor(const std::string& name) { return name.rfind("model/", 0) == 0; }

 private:
  static Snapshot load_checked(const std::filesystem::path& step_dir, int rank, const TensorFilter& wanted);
  /// Every rank's report: `done` when `failure` is empty, else the failure.
  std::vector<std::string> gather_reports(const std::string& failure, const std::string& done) const;
  /// Collective: throws on every rank when any rank's `failure` is not empty.
  void agree(const std::string& stage, int64_t step, const std::string& failure) const;
  void prune() const;
  std::filesystem::path dir_;
  int64_t keep_last_n_;
  std::function<bool(int64_t)> is_milestone_;
  SaveGroup group_;
};

}  // namespace kforge::checkpoint
