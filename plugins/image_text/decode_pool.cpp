// The ordered decode window: position p goes to slot p % depth; a worker claims a position only while it is
// within depth of the next one to be taken, so at most depth samples are held, and next() takes the slots in
// order. Warnings are issued by next(), so they come in the sampler's order too.
#include "image_text/decode_pool.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::image_text {

DecodePool::DecodePool(std::shared_ptr<const ImageTextSource> source, PreprocessOptions preprocess,
                       std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end, DecodePoolOptions options)
    : source_(std::move(source)),
      preprocess_(std::move(preprocess)),
      index_at_(std::move(index_at)),
      end_(end),
      options_(std::move(options)),
      claimed_(start),
      taken_(start) {
  if (!source_ || !index_at_ || !preprocess_.tokenize) {
    throw sdk::Error("DecodePool: needs a source, a sampler order (index_at) and a tokenizer");
  }
  if (start < 0 || end < start)
    throw sdk::Error(fmt::format("DecodePool: positions [{}, {}) are not a range", start, end));
  if (options_.num_workers < 0 || options_.queue_depth < 0) {
    throw sdk::ConfigError(fmt::format("[data] num_workers = {} and the queue depth {} must be >= 0",
                                       options_.num_workers, options_.queue_depth));
  }
  if (!options_.warn) options_.warn = stderr_warn();
  if (options_.num_workers == 0) return;
  slots_.resize(options_.queue_depth > 0 ? options_.queue_depth : 2 * options_.num_workers);
  workers_.reserve(options_.num_workers);
  for (int w = 0; w < options_.num_workers; ++w) workers_.emplace_back([this] { work(); });
}

DecodePool::~DecodePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  room_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

DecodePool::Outcome DecodePool::produce(int64_t position, int64_t index) const {
  try {
    Sample sample = preprocess_sample(source_->load(index), preprocess_);
    sample.position = position;
    sample.index = index;
    return sample;
  } catch (const SampleError& e) {
    return e;
  } catch (...) {
    return std::current_exception();
  }
}

void DecodePool::work() {
  for (;;) {
    int64_t position = 0;
    int64_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock,
                 [this] { return stopping_ || claimed_ >= end_ || claimed_ < taken_ + static_cast<int64_t>(depth()); });
      if (stopping_ || claimed_ >= end_) return;
      position = claimed_++;
      try {
        index = index_at_(position);
      } catch (...) {
        slots_[position % depth()] = Outcome(std::current_exception());
        ready_.notify_all();
        continue;
      }
    }
    Outcome outcome = produce(position, index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slots_[position % depth()] = std::move(outcome);
    }
    ready_.notify_all();
  }
}

std::optional<Sample> DecodePool::next() {
  for (;;) {
    Outcome outcome;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (taken_ >= end_) return std::nullopt;
      if (workers_.empty()) {
        const int64_t position = taken_++;
        lock.unlock();
        outcome = produce(position, index_at_(position));
      } else {
        std::optional<Outcome>& slot = slots_[taken_ % depth()];
        ready_.wait(lock, [&slot] { return slot.has_value(); });
        outcome = std::move(*slot);
        slot.reset();
        ++taken_;
        lock.unlock();
        room_.notify_all();
      }
    }
    if (Sample* sample = std::get_if<Sample>(&outcome)) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.delivered;
      return std::move(*sample);
    }
    if (const SampleError* skipped = std::get_if<SampleError>(&outcome)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.skipped;
      }
      options_.warn(fmt::format("{}; skipped", skipped->what()));
      continue;
    }
    std::rethrow_exception(std::get<std::exception_ptr>(outcome));
  }
}

DecodePoolStats DecodePool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kforge::image_text
