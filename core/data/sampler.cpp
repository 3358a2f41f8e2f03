// BatchSampler: torch.randperm with Generator(seed+epoch), drop_last, rank striding, skip-ahead.
#include "data/sampler.h"

#include <fmt/format.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "kforge/sdk/error.h"

namespace kforge::data {

BatchSampler::BatchSampler(int64_t dataset_size, int64_t batch_size, int64_t seed, int rank, int world, bool shuffle)
    : dataset_size_(dataset_size), batch_size_(batch_size), seed_(seed), rank_(rank), world_(world), shuffle_(shuffle) {
  if (world < 1 || rank < 0 || rank >= world) {
    throw sdk::Error(fmt::format("sampler: rank {} is not in [0, world size {})", rank, world));
  }
  if (batch_size < 1) throw sdk::ConfigError(fmt::format("sampler: batch size {} must be >= 1", batch_size));
  if (dataset_size < 0) throw sdk::Error(fmt::format("sampler: negative dataset size {}", dataset_size));
  samples_per_rank_ = dataset_size / world;
  if (batches_per_epoch() == 0) {
    throw sdk::Error(fmt::format(
        "the dataset has {} samples: {} per data-parallel rank ({} ranks), fewer than one batch of {}; add data, or "
        "lower train.batch_size or train.seq_len",
        dataset_size, samples_per_rank_, world, batch_size));
  }
}

std::vector<int64_t> BatchSampler::epoch_indices(int64_t epoch) const {
  at::Tensor order;
  if (shuffle_) {
    at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed_ + epoch));
    order = at::randperm(dataset_size_, gen, at::kLong);
  } else {
    order = at::arange(dataset_size_, at::kLong);
  }
  const int64_t* all = order.data_ptr<int64_t>();
  std::vector<int64_t> mine(static_cast<size_t>(samples_per_rank_));
  // indices[:total][rank::world] with total = samples_per_rank * world.
  for (int64_t i = 0; i < samples_per_rank_; ++i) mine[static_cast<size_t>(i)] = all[rank_ + i * world_];
  return mine;
}

std::vector<int64_t> BatchSampler::next_batch() {
  if (pos_.batches_yielded >= batches_per_epoch()) {
    ++pos_.epoch;
    pos_.batches_yielded = 0;
  }
  if (cached_epoch_ != pos_.epoch) {
    cached_ = epoch_indices(pos_.epoch);
    cached_epoch_ = pos_.epoch;
  }
  const auto begin = cached_.begin() + pos_.batches_yielded * batch_size_;
  std::vector<int64_t> batch(begin, begin + batch_size_);
  ++pos_.batches_yielded;
  return batch;
}

void BatchSampler::restore(Position p) {
  if (p.epoch < 0 || p.batches_yielded < 0 || p.batches_yielded > batches_per_epoch()) {
    throw sdk::Error(fmt::format(
        "cannot resume the data order at epoch {}, batch {}: an epoch has {} batches here ({} samples, batch size {}, "
        "{} ranks); exact resume needs the same data, batch size and data-parallel size as the checkpoint",
        p.epoch, p.batches_yielded, batches_per_epoch(), dataset_size_, batch_size_, world_));
  }
  pos_ = p;
}

}  // namespace kforge::data
