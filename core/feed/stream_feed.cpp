// StreamFeed: windows cut from the front of carry + chunk; a checkpoint keeps the chunk's starting position, the carry
// and how far the cutting got, so a resumed feed re-tokenises that one chunk and goes on bit for bit.
#include "feed/stream_feed.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>

#include "data/batch.h"
#include "feed/hf_data.h"
#include "kforge/sdk/dataset.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::feed {
namespace {

// One batch's windows as a dataset, for data::make_batch (its checks and document split).
class StreamWindows final : public sdk::Dataset {
 public:
  StreamWindows(at::Tensor rows, std::string what) : rows_(std::move(rows)), what_(std::move(what)) {}
  int64_t size() const override { return rows_.size(0); }
  at::Tensor window(int64_t index) const override { return rows_[index]; }
  std::string describe() const override { return what_; }

 private:
  at::Tensor rows_;
  std::string what_;
};

data::Tokenizer stream_tokenizer(const std::filesystem::path& path) {
  data::Tokenizer tokenizer(path);
  if (tokenizer.eos_id() < 0) {
    throw sdk::Error(fmt::format("tokenizer '{}' has no end-of-sequence piece; streamed documents could not be "
                                 "separated",
                                 path.string()));
  }
  return tokenizer;
}

}  // namespace

StreamFeed::StreamFeed(std::vector<std::filesystem::path> files, const std::filesystem::path& tokenizer,
                       const Shape& shape, int64_t rank, int64_t ranks)
    : files_(std::move(files)), tokenizer_(stream_tokenizer(tokenizer)), shape_(shape), rank_(rank), ranks_(ranks) {
  start_.rng = stream_epoch_state(shape.seed, 0);
  before_ = start_;
}

std::vector<int> StreamFeed::next_window() {
  const size_t w = static_cast<size_t>(shape_.seq_len + 1);
  if (!tokens_) {
    auto stream = std::make_unique<DocumentStream>(files_, shape_.shuffle_buffer, shape_.seed, rank_, ranks_);
    stream->restore(start_);
    StreamTokens::Options o;
    o.tokenizer = &tokenizer_;
    o.text_field = shape_.text_field;
    o.workers = shape_.workers;
    o.ahead = static_cast<size_t>(std::max<int64_t>(1, shape_.prefetch_factor * shape_.workers));
    tokens_ = std::make_unique<StreamTokens>(std::move(stream), o);
    TokenChunk first = tokens_->next();
    before_ = std::move(first.before);
    pending_ = carry_;
    pending_.insert(pending_.end(), first.tokens.begin(), first.tokens.end());
    if (static_cast<size_t>(start_used_) > pending_.size()) {
      throw sdk::Error(fmt::format("the checkpoint's stream position used {} tokens of a chunk that has {}: the "
                                   "export or [data] tokenizer_path changed since it was written",
                                   start_used_, pending_.size()));
    }
    used_ = static_cast<size_t>(start_used_);
  }
  while (pending_.size() - used_ < w) {
    carry_.assign(pending_.begin() + static_cast<std::ptrdiff_t>(used_), pending_.end());
    TokenChunk next = tokens_->next();
    before_ = std::move(next.before);
    pending_ = carry_;
    pending_.insert(pending_.end(), next.tokens.begin(), next.tokens.end());
    used_ = 0;
  }
  std::vector<int> window(pending_.begin() + static_cast<std::ptrdiff_t>(used_),
                          pending_.begin() + static_cast<std::ptrdiff_t>(used_ + w));
  used_ += w;
  return window;
}

std::vector<data::Batch> StreamFeed::micro_batches(int64_t /*step*/, bool /*logged*/) {
  std::vector<data::Batch> batches;
  const int64_t w = shape_.seq_len + 1;
  for (int64_t k = 0; k < shape_.micro_batches; ++k) {
    at::Tensor rows = at::empty({shape_.batch_size, w}, at::kLong);
    int64_t* out = rows.data_ptr<int64_t>();
    for (int64_t r = 0; r < shape_.batch_size; ++r) {
      const std::vector<int> window = next_window();
      std::copy(window.begin(), window.end(), out + r * w);
    }
    std::vector<int64_t> indices(static_cast<size_t>(shape_.batch_size));
    for (int64_t r = 0; r < shape_.batch_size; ++r) indices[static_cast<size_t>(r)] = r;
    const StreamWindows windows(rows, fmt::format("batch {} of the stream of {} file(s) from '{}'", batches_yielded_,
                                                  files_.size(), files_.front().parent_path().string()));
    batches.push_back(data::make_batch(windows, indices, shape_.vocab_size, shape_.eos_id));
    ++batches_yielded_;
  }
  return batches;
}

void StreamFeed::save_position(nlohmann::json& entry, nlohmann::json& /*train_state*/,
                               int64_t /*steps_drawn*/) const {
  entry["epoch"] = before_.epoch;
  entry["batches_yielded"] = batches_yielded_;
  entry["stream"] = {{"position", before_.to_json()}, {"carry", carry_}, {"used", used_}};
}

void StreamFeed::resume(const nlohmann::json& ts, int64_t /*step*/) {
  const auto& positions = ts.at("data");
  const int64_t saved_ranks = ts.value("data_parallel_size", static_cast<int64_t>(positions.size()));
  for (const auto& p : positions) {
    if (!p.contains("stream")) {
      throw sdk::Error("the checkpoint was written by a run that did not stream its data: set [data] hf_streaming = "
                       "false to continue it, or start the stream afresh without [checkpoint] load_path");
    }
  }
  tokens_.reset();
  pending_.clear();
  used_ = 0;
  if (saved_ranks == ranks_) {
    // Entries are in global rank order; ranks that share a data-parallel rank wrote the same position.
    const nlohmann::json* mine = &positions.at(static_cast<size_t>(rank_));
    for (const auto& p : positions) {
      if (p.value("rank", int64_t{-1}) == rank_) mine = &p;
    }
    const nlohmann::json& s = mine->at("stream");
    start_ = StreamPosition::from_json(s.at("position"));
    carry_ = s.at("carry").get<std::vector<int>>();
    start_used_ = s.at("used").get<int64_t>();
    batches_yielded_ = mine->at("batches_yielded").get<int64_t>();
  } else {
    // The document order is every rank's; the new ranks deal it out again from the earliest position.
    const nlohmann::json* earliest = &positions.at(0);
    for (const auto& p : positions) {
      if (p.at("stream").at("position").at("document").get<int64_t>() <
          earliest->at("stream").at("position").at("document").get<int64_t>()) {
        earliest = &p;
      }
    }
    start_ = StreamPosition::from_json(earliest->at("stream").at("position"));
    carry_.clear();
    start_used_ = 0;
    batches_yielded_ = 0;
    log::get().info("streamed documents re-dealt over {} data-parallel ranks (checkpoint had {}) from document {} of "
                    "epoch {}",
                    ranks_, saved_ranks, start_.document, start_.epoch);
  }
  before_ = start_;
  used_ = static_cast<size_t>(start_used_);
}

std::unique_ptr<StreamFeed> open_stream_feed(const config::JobConfig& job, int64_t rank, int64_t ranks,
                                             int64_t vocab_size, int64_t eos_id) {
  const config::HfExport& hf = *job.data.hf;
  const auto data = job.view("data");
  StreamFeed::Shape shape;
  shape.batch_size = job.train.batch_size;
  shape.micro_batches = job.train.grad_accum_steps;
  shape.seq_len = job.train.seq_len;
  shape.vocab_size = vocab_size;
  shape.eos_id = eos_id;
  shape.seed = static_cast<uint64_t>(job.train.effective_data_seed());
  shape.shuffle_buffer = data.get_int("hf_streaming_shuffle_buffer");
  shape.workers = static_cast<int>(data.get_int("num_workers"));
  shape.prefetch_factor = data.get_int("prefetch_factor");
  shape.text_field = hf.text_field;
  return std::make_unique<StreamFeed>(hf_export_inputs(job, hf), job.data.tokenizer_path, shape, rank, ranks);
}

}  // namespace kforge::feed
