// StreamFeed: the training batches of a streamed Hugging Face export ([data] hf_streaming = true): documents read
// lazily, shuffled in a buffer, dealt to the data-parallel ranks, tokenised ahead and cut into windows, with a
// checkpointed position that resumes the token stream exactly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "data/tokenizer.h"
#include "feed/batch_feed.h"
#include "feed/stream_tokens.h"

namespace kforge::feed {

class StreamFeed final : public BatchFeed {
 public:
  /// What a feed reads: `micro_batches` batches of `batch_size` windows of `seq_len` + 1 tokens per step; ids at or
  /// past `vocab_size` refused and rows split into documents at `eos_id` (-1: not packed), as data::make_batch does.
  struct Shape {
    int64_t batch_size = 1, micro_batches = 1, seq_len = 1, vocab_size = 0, eos_id = -1;
    uint64_t seed = 0;
    int64_t shuffle_buffer = 10000;  ///< [data] hf_streaming_shuffle_buffer
    int workers = 0;                 ///< [data] num_workers
    int64_t prefetch_factor = 2;     ///< [data] prefetch_factor: chunks tokenised ahead per worker
    std::string text_field = "text";
  };

  /// This is data-parallel rank `rank` of `ranks`. Nothing is read until the first batch (or resume()). Throws
  /// sdk::Error naming the tokenizer when it cannot be loaded or has no end-of-sequence id.
  StreamFeed(std::vector<std::filesystem::path> files, const std::filesystem::path& tokenizer, const Shape& shape,
             int64_t rank, int64_t ranks);

  std::vector<data::Batch> micro_batches(int64_t step, bool logged) override;
  /// `entry`: "epoch", "batches_yielded" and "stream": the stream's position before the chunk being cut, the tokens
  /// carried into that chunk from the one before ("carry", fewer than a window) and the tokens of carry + chunk
  /// already cut into windows ("used").
  void save_position(nlohmann::json& entry, nlohmann::json& train_state, int64_t steps_drawn) const override;
  /// The same data-parallel size continues every rank's token stream exactly. Another size continues the shared
  /// document order from the earliest document an old rank had not finished, dealt over the new ranks (no document
  /// is lost; later ones some old rank had read may be seen again, and the carried tokens are dropped).
  void resume(const nlohmann::json& train_state, int64_t step) override;

  /// The next window of seq_len + 1 tokens of this rank's stream.
  std::vector<int> next_window();

 private:
  std::vector<std::filesystem::path> files_;
  data::Tokenizer tokenizer_;
  Shape shape_;
  int64_t rank_, ranks_;
  std::unique_ptr<StreamTokens> tokens_;  ///< started on the first window, from start_
  StreamPosition start_;
  int64_t start_used_ = 0;       ///< tokens of the first chunk after start_ already used (resume)
  StreamPosition before_;        ///< the position before the chunk pending_ holds
  std::vector<int> carry_;       ///< the tokens before that chunk in pending_
  std::vector<int> pending_;     ///< carry_ + the chunk's tokens
  size_t used_ = 0;              ///< of pending_, cut into windows
  int64_t batches_yielded_ = 0;
};

/// The feed of [data] hf_dataset_name with hf_streaming = true for data-parallel rank `rank` of `ranks` ([data]
/// tokenizer_path, hf_dataset_text_field, hf_streaming_shuffle_buffer, num_workers, prefetch_factor; [train] shape and
/// data seed). Throws sdk::ConfigError naming the key for an export that cannot be read or no tokenizer_path.
std::unique_ptr<StreamFeed> open_stream_feed(const config::JobConfig& job, int64_t rank, int64_t ranks,
                                             int64_t vocab_size, int64_t eos_id);

}  // namespace kforge::feed
