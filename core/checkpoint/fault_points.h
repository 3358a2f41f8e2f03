// The fault points the checkpoint writer and the step loop pass (KFORGE_FAULT=<name>, see
// resilience/fault_point.h), in the order one save passes them.
#pragma once

namespace kforge::checkpoint {

/// Inside a rank's shard write: the header and about half the tensor bytes written, not the rest.
inline constexpr const char* kFaultPointShardPartial = "checkpoint.shard_partial";
/// A rank's shard fully written, not yet fsynced.
inline constexpr const char* kFaultPointShardWritten = "checkpoint.shard_written";
/// Every file of the step directory fsynced (rank 0), before the directory is renamed into step_N.
inline constexpr const char* kFaultPointFsynced = "checkpoint.fsynced";
/// step_N renamed into place (rank 0), before `latest` moves.
inline constexpr const char* kFaultPointRenamed = "checkpoint.renamed";
/// `latest` points at step_N (rank 0), before older checkpoints are pruned.
inline constexpr const char* kFaultPointLatestMoved = "checkpoint.latest_moved";
/// The end of every training step: after the optimizer step, before eval and checkpointing.
inline constexpr const char* kFaultPointStepEnd = "train.step_end";

}  // namespace kforge::checkpoint
