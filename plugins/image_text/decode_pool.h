// DecodePool: `num_workers` threads read and preprocess the samples the sampler names, in its order, into a
// bounded window of `queue_depth` slots, so a training step takes a ready sample once the pool is warm. The
// output order is the sampler's whatever the threads' timing; a sample whose image is corrupt or missing
// (SampleError) is skipped with a warning naming its origin and key and counted. Any other error is rethrown
// by next() at that sample's place.
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

#include "image_text/image_text_source.h"
#include "image_text/sample_error.h"
#include "image_text/sample_preprocess.h"
#include "image_text/warn.h"

namespace kforge::image_text {

struct DecodePoolOptions {
  int num_workers = 0;  ///< 0: next() reads and decodes on the calling thread
  int queue_depth = 0;  ///< samples read ahead at most (0: 2 x num_workers); ignored without workers
  Warn warn = stderr_warn();
};

struct DecodePoolStats {
  int64_t delivered = 0;
  int64_t skipped = 0;  ///< samples skipped for a SampleError
};

class DecodePool {
 public:
  /// Serves the samples `index_at(p)` for positions p in [start, end) of the sampler's order (index_at is
  /// called under the pool's lock, one position at a time in order). The source's load() and the tokenizer run
  /// on the workers at once.
  DecodePool(std::shared_ptr<const ImageTextSource> source, PreprocessOptions preprocess,
             std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end, DecodePoolOptions options);
  ~DecodePool();
  DecodePool(const DecodePool&) = delete;
  DecodePool& operator=(const DecodePool&) = delete;

  /// The next usable sample in order; nullopt after position end - 1.
  std::optional<Sample> next();
  DecodePoolStats stats() const;

 private:
  using Outcome = std::variant<Sample, SampleError, std::exception_ptr>;
  Outcome produce(int64_t position, int64_t index) const;
  size_t depth() const { return slots_.size(); }
  void work();

  std::shared_ptr<const ImageTextSource> source_;
  PreprocessOptions preprocess_;
  std::function<int64_t(int64_t)> index_at_;
  int64_t end_;
  DecodePoolOptions options_;

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

}  // namespace kforge::image_text
