// AsyncWriter: checkpoint saves off the step loop (checkpoint.async_mode = "async"). save() copies
// the snapshot into a reusable staging buffer and hands it to a writer thread, which runs
// CheckpointManager::save (streaming, fsyncs, the all-rank agreement, then `latest`). There are
// two buffers, used in turn, so the copy of one save overlaps the write of the previous one, and a
// save never waits on more than that one write.
#pragma once

#include <array>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_manager.h"

namespace kforge::checkpoint {

/// `live` copied into `buffer` in host memory, reusing its tensors where the names, shapes and dtypes match; a device
/// tensor's copy is page-locked when `pinned` (checkpoint.async_mode = "async_with_pinned_mem": a faster copy).
void stage_snapshot(const Snapshot& live, Snapshot& buffer, bool pinned = false);

class AsyncWriter {
 public:
  /// `manager`'s collectives must run on a group no other thread uses; it must outlive the writer. `pinned`: stage
  /// device tensors in page-locked memory (stage_snapshot).
  explicit AsyncWriter(CheckpointManager& manager, bool pinned = false);
  /// Drains: waits for the save in flight (its failure, if any, is dropped: the run is ending).
  ~AsyncWriter();
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;

  /// Stages `live` (the step loop's only stall), waits for the save in flight if there is one,
  /// then hands the staged copy to the writer thread. Rethrows a failed earlier save's error.
  void save(const Snapshot& live);
  /// Waits until no save is in flight; rethrows a failed save's error.
  void drain();
  /// The saves committed since the last call (step, directory); rethrows a failed save's error.
  std::vector<std::pair<int64_t, std::filesystem::path>> committed();

 private:
  void run();
  void rethrow_failure();  ///< with mutex_ held

  CheckpointManager& manager_;
  bool pinned_;
  std::array<Snapshot, 2> buffers_;
  size_t next_buffer_ = 0;  ///< the one not being written
  std::mutex mutex_;
  std::condition_variable changed_;
  const Snapshot* handed_ = nullptr;  ///< given to the thread, not yet taken
  bool writing_ = false;              ///< a save handed over and not finished
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::vector<std::pair<int64_t, std::filesystem::path>> committed_;
  std::thread thread_;  ///< last: started once everything above exists
};

}  // namespace kforge::checkpoint
