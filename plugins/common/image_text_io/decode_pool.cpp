// The pool's argument checks, and the image-text pool: the source's raw sample, preprocessed.
#include "image_text_io/decode_pool.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::image_text {
namespace detail {

void check_pool_arguments(bool has_load, bool has_index_at, int64_t start, int64_t end,
                          const DecodePoolOptions& options) {
  if (!has_load || !has_index_at) throw sdk::Error("DecodePool: needs a sample loader and a sampler order (index_at)");
  if (start < 0 || end < start)
    throw sdk::Error(fmt::format("DecodePool: positions [{}, {}) are not a range", start, end));
  if (options.num_workers < 0 || options.queue_depth < 0) {
    throw sdk::ConfigError(fmt::format("[data] num_workers = {} and the queue depth {} must be >= 0",
                                       options.num_workers, options.queue_depth));
  }
}

}  // namespace detail
namespace {

OrderedDecodePool<Sample>::Load image_text_loader(std::shared_ptr<const ImageTextSource> source,
                                                  PreprocessOptions preprocess) {
  if (!source || !preprocess.tokenize) throw sdk::Error("DecodePool: needs a source and a tokenizer");
  return [source = std::move(source), preprocess = std::move(preprocess)](int64_t position, int64_t index) {
    Sample sample = preprocess_sample(source->load(index), preprocess);
    sample.position = position;
    sample.index = index;
    return sample;
  };
}

}  // namespace

DecodePool::DecodePool(std::shared_ptr<const ImageTextSource> source, PreprocessOptions preprocess,
                       std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end, DecodePoolOptions options)
    : OrderedDecodePool<Sample>(image_text_loader(std::move(source), std::move(preprocess)), std::move(index_at), start,
                                end, std::move(options)) {}

}  // namespace kforge::image_text
