// TokenFeed: a token dataset's windows in the sampler's order, and the position a checkpoint keeps.
#include "feed/token_feed.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::feed {

TokenFeed::TokenFeed(const sdk::Dataset& data, const Shape& shape, const dist::Group& dp)
    : data_(data),
      shape_(shape),
      dp_(dp),
      sampler_(data.size(), shape.batch_size, shape.seed, dp.rank(), dp.size(), shape.shuffle) {}

data::Batch TokenFeed::next_batch() {
  return data::make_batch(data_, sampler_.next_batch(), shape_.vocab_size, shape_.eos_id);
}

std::vector<data::Batch> TokenFeed::micro_batches(int64_t /*step*/, bool /*logged*/) {
  std::vector<data::Batch> batches;
  for (int64_t k = 0; k < shape_.micro_batches; ++k) batches.push_back(next_batch());
  return batches;
}

void TokenFeed::save_position(nlohmann::json& entry, nlohmann::json& /*train_state*/, int64_t /*steps_drawn*/) const {
  const data::BatchSampler::Position position = sampler_.position();
  entry["epoch"] = position.epoch;
  entry["batches_yielded"] = position.batches_yielded;
}

void TokenFeed::resume(const nlohmann::json& ts, int64_t /*step*/) {
  const auto& positions = ts.at("data");
  const int64_t saved_ranks = ts.value("data_parallel_size", static_cast<int64_t>(positions.size()));
  const int64_t saved_batch = ts.value("batch_size", shape_.batch_size);
  auto read = [](const nlohmann::json& p) {
    return data::BatchSampler::Position{p.at("epoch").get<int64_t>(), p.at("batches_yielded").get<int64_t>()};
  };
  if (saved_ranks == dp_.size() && saved_batch == shape_.batch_size) {
    // Entries are in global rank order, one per rank; ranks that share a data-parallel rank (expert parallelism)
    // wrote the same position.
    for (const auto& p : positions) {
      if (p.value("rank", int64_t{-1}) == dp_.rank()) return sampler_.restore(read(p));
    }
    return sampler_.restore(read(positions.at(dp_.rank())));
  }
  // Elastic resume: every rank consumed the same number of batches, so the ranks together took the
  // first batches_yielded * batch_size * ranks samples of the epoch's order; continue after them.
  const data::BatchSampler::Position saved = read(positions.at(0));
  const int64_t samples = saved.batches_yielded * saved_batch * saved_ranks;
  const int64_t per_batch = shape_.batch_size * dp_.size();
  if (samples % per_batch != 0) {
    throw sdk::Error(fmt::format(
        "cannot continue the data order: the checkpoint's {} ranks x train.batch_size {} consumed {} samples of "
        "epoch {}, not a multiple of this run's {} ranks x train.batch_size {}; choose a batch size that divides it",
        saved_ranks, saved_batch, samples, saved.epoch, dp_.size(), shape_.batch_size));
  }
  log::get().info("data order re-derived for {} data-parallel ranks (checkpoint had {}): {} samples into epoch {}",
                  dp_.size(), saved_ranks, samples, saved.epoch);
  sampler_.restore({saved.epoch, samples / per_batch});
}

}  // namespace kforge::feed
