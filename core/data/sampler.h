// BatchSampler: KempnerForge's DistributedSampler + StatefulDataLoader position (exact resume).
#pragma once

#include <cstdint>
#include <vector>

namespace kforge::data {

/// Per epoch: randperm(n) from a CPU generator seeded seed+epoch (arange when !shuffle), truncated
/// to a multiple of `world` (drop_last), rank-strided indices[rank::world], then whole batches of
/// batch_size (a partial last batch is dropped). The position {epoch, batches_yielded} is what a
/// checkpoint stores; restoring it continues with exactly the batches an uninterrupted run yields.
class BatchSampler {
 public:
  struct Position {
    int64_t epoch = 0;
    int64_t batches_yielded = 0;  ///< batches of `epoch` already handed out
    bool operator==(const Position&) const = default;
  };

  /// Throws kforge::sdk::Error when the rank's share of the data holds no whole batch.
  BatchSampler(int64_t dataset_size, int64_t batch_size, int64_t seed, int rank = 0, int world = 1,
               bool shuffle = true);

  /// The next batch of dataset indices; after the last batch of an epoch, starts the next epoch.
  std::vector<int64_t> next_batch();

  Position position() const { return pos_; }
  /// Continues from `p` (taken with the same dataset size, batch size, seed and world size).
  /// Throws kforge::sdk::Error when p.batches_yielded exceeds batches_per_epoch().
  void restore(Position p);

  int64_t batches_per_epoch() const { return samples_per_rank_ / batch_size_; }
  int64_t samples_per_rank() const { return samples_per_rank_; }
  /// This rank's index order for `epoch` (samples_per_rank() entries).
  std::vector<int64_t> epoch_indices(int64_t epoch) const;

 private:
  int64_t dataset_size_, batch_size_, seed_;
  int rank_, world_;
  bool shuffle_;
  int64_t samples_per_rank_;
  Position pos_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> cached_;
};

}  // namespace kforge::data
