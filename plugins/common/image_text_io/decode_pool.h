// DecodePool: `num_workers` threads read and preprocess the samples the sampler names, in its order, into a
// bounded window of `queue_depth` slots, so a training step takes a ready sample once the pool is warm. The
// output order is the sampler's whatever the threads' timing; a sample whose image is corrupt or missing
// (SampleError) is skipped and counted, and reported to a FailureLog (rate-limited warnings naming its origin and
// key; sdk::ConfigError after too many in a row). Any other error is rethrown by next() at that sample's place. OrderedDecodePool<T> is the same window over any sample type, made by a
// given function (the video datasets' clips); DecodePool is the image-text one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include "image_text_io/failure_log.h"
#include "image_text_io/image_text_source.h"
#include "image_text_io/sample_error.h"
#include "image_text_io/sample_preprocess.h"
#include "image_text_io/warn.h"

namespace kforge::image_text {

struct DecodePoolOptions {
  int num_workers = 0;  ///< 0: next() reads and decodes on the calling thread
  int queue_depth = 0;  ///< samples read ahead at most (0: 2 x num_workers); ignored without workers
  Warn warn = stderr_warn();
  std::string dataset = "the dataset";  ///< names the data in the failure messages (its describe() line)
};

struct DecodePoolStats {
  int64_t delivered = 0;
  int64_t skipped = 0;  ///< samples skipped for a SampleError
};

namespace detail {
/// Throws for a missing loader or sampler order, a bad range, or negative thread counts.
void check_pool_arguments(bool has_load, bool has_index_at, int64_t start, int64_t end,
                          const DecodePoolOptions& options);
}  // namespace detail

template <typename T>
class OrderedDecodePool {
 public:
  /// Makes the sample of `position`, whose source index is `index`; called on the workers at once.
  using Load = std::function<T(int64_t position, int64_t index)>;
  /// Why a loaded sample is a failed one, handed out all the same (a clip without frames); "" when it is not.
  using FailureOf = std::function<std::string(const T&)>;

  /// Serves the samples `load(p, index_at(p))` for positions p in [start, end) of the sampler's order (index_at is
  /// called under the pool's lock, one position at a time in order). The samples `failure_of` names count as failures
  /// as the SampleErrors do.
  OrderedDecodePool(Load load, std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end,
                    DecodePoolOptions options, FailureOf failure_of = {});
  ~OrderedDecodePool();
  OrderedDecodePool(const OrderedDecodePool&) = delete;
  OrderedDecodePool& operator=(const OrderedDecodePool&) = delete;

  /// The next usable sample in order; nullopt after position end - 1. Throws sdk::ConfigError once
  /// kMaxConsecutiveFailures samples in a row failed.
  std::optional<T> next();
  DecodePoolStats stats() const;

 private:
  using Outcome = std::variant<T, SampleError, std::exception_ptr>;
  Outcome produce(int64_t position, int64_t index) const;
  size_t depth() const { return slots_.size(); }
  void work();

  Load load_;
  std::function<int64_t(int64_t)> index_at_;
  int64_t end_;
  DecodePoolOptions options_;
  FailureOf failure_of_;
  FailureLog failures_;  ///< used by next() only

  mutable std::mutex mutex_;
  std::condition_variable ready_;  ///< a slot was filled
  std::condition_variable room_;   ///< a slot was freed, or the pool is stopping
  std::vector<std::optional<Outcome>> slots_;
  int64_t claimed_ = 0;  ///< next position a worker takes
  int64_t taken_ = 0;    ///< next position next() returns
  bool stopping_ = false;
  DecodePoolStats stats_;
  std::vector<std::thread> workers_;
};

class DecodePool : public OrderedDecodePool<Sample> {
 public:
  /// The source's load() and preprocess_sample (with its tokenizer) run on the workers at once.
  DecodePool(std::shared_ptr<const ImageTextSource> source, PreprocessOptions preprocess,
             std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end, DecodePoolOptions options);
};

// The ordered decode window: position p goes to slot p % depth; a worker claims a position only while it is
// within depth of the next one to be taken, so at most depth samples are held, and next() takes the slots in
// order. Failures are reported by next(), so they come in the sampler's order too.

template <typename T>
OrderedDecodePool<T>::OrderedDecodePool(Load load, std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end,
                                        DecodePoolOptions options, FailureOf failure_of)
    : load_(std::move(load)),
      index_at_(std::move(index_at)),
      end_(end),
      options_(std::move(options)),
      failure_of_(std::move(failure_of)),
      failures_(options_.dataset, options_.warn ? options_.warn : stderr_warn()),
      claimed_(start),
      taken_(start) {
  detail::check_pool_arguments(static_cast<bool>(load_), static_cast<bool>(index_at_), start, end, options_);
  if (options_.num_workers == 0) return;
  slots_.resize(options_.queue_depth > 0 ? options_.queue_depth : 2 * options_.num_workers);
  workers_.reserve(options_.num_workers);
  for (int w = 0; w < options_.num_workers; ++w) workers_.emplace_back([this] { work(); });
}

template <typename T>
OrderedDecodePool<T>::~OrderedDecodePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  room_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

template <typename T>
typename OrderedDecodePool<T>::Outcome OrderedDecodePool<T>::produce(int64_t position, int64_t index) const {
  try {
    return load_(position, index);
  } catch (const SampleError& e) {
    return e;
  } catch (...) {
    return std::current_exception();
  }
}

template <typename T>
void OrderedDecodePool<T>::work() {
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

template <typename T>
std::optional<T> OrderedDecodePool<T>::next() {
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
    if (T* sample = std::get_if<T>(&outcome)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.delivered;
      }
      const std::string failure = failure_of_ ? failure_of_(*sample) : std::string();
      if (failure.empty()) {
        failures_.succeeded();
      } else {
        failures_.failed(failure);
      }
      return std::move(*sample);
    }
    if (const SampleError* skipped = std::get_if<SampleError>(&outcome)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.skipped;
      }
      failures_.failed(std::string(skipped->what()) + "; skipped");
      continue;
    }
    std::rethrow_exception(std::get<std::exception_ptr>(outcome));
  }
}

template <typename T>
DecodePoolStats OrderedDecodePool<T>::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kforge::image_text
