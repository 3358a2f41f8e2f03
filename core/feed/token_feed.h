// TokenFeed: the batches of one token dataset's windows ([data] dataset_path or a Hugging Face export), in
// data::BatchSampler's order over the data-parallel ranks, split into documents at the EOS id when packed ([data]
// pack_sequences); shuffled per epoch for training, in order for evaluation.
#pragma once

#include <cstdint>

#include "data/sampler.h"
#include "dist/group.h"
#include "feed/batch_feed.h"
#include "kforge/sdk/dataset.h"

namespace kforge::feed {

class TokenFeed final : public BatchFeed, public BatchSource {
 public:
  /// What a feed reads: `batch_size` windows per batch, `micro_batches` batches per step; ids at or past `vocab_size`
  /// refused and rows split into documents at `eos_id` (-1: not packed), as data::make_batch does; `shuffle` each
  /// epoch's order by `seed + epoch`, else in order.
  struct Shape {
    int64_t batch_size = 1, micro_batches = 1, vocab_size = 0, eos_id = -1, seed = 0;
    bool shuffle = true;
  };

  /// `data` and `dp` are held by reference and must outlive the feed. Throws sdk::Error when this rank's share of the
  /// data holds no whole batch.
  TokenFeed(const sdk::Dataset& data, const Shape& shape, const dist::Group& dp);

  std::vector<data::Batch> micro_batches(int64_t step, bool logged) override;
  void save_position(nlohmann::json& entry, nlohmann::json& train_state, int64_t steps_drawn) const override;
  /// Another data-parallel size or batch size continues after the samples the checkpoint's ranks consumed together;
  /// throws sdk::Error when they are not a whole number of this run's global batches.
  void resume(const nlohmann::json& train_state, int64_t step) override;

  data::Batch next_batch() override;
  void rewind() override { sampler_.restore({0, 0}); }

 private:
  const sdk::Dataset& data_;
  Shape shape_;
  const dist::Group& dp_;
  data::BatchSampler sampler_;
};

}  // namespace kforge::feed
