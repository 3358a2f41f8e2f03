// StreamTokens: a DocumentStream's documents tokenised ahead of the training step, on worker threads ([data]
// num_workers, prefetch_factor), in chunks whose order and contents never depend on the threads' timing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/chunk_encoder.h"
#include "feed/document_stream.h"

namespace kforge::data {
class Tokenizer;
}

namespace kforge::feed {

/// Documents of this rank's share, tokenised: each document's ids followed by EOS, back to back, and where the stream
/// was before the chunk's first document (restoring it there gives this chunk again).
struct TokenChunk {
  StreamPosition before;
  std::vector<int> tokens;
};

class StreamTokens {
 public:
  /// Documents per chunk: the granularity at which a resumed stream re-tokenises.
  static constexpr int64_t kChunkDocuments = 64;

  struct Options {
    const data::Tokenizer* tokenizer = nullptr;  ///< must outlive the StreamTokens
    std::string text_field = "text";
    int workers = 0;   ///< 0: next() reads and tokenises on the calling thread
    size_t ahead = 1;  ///< chunks read, being tokenised or ready at most (with workers)
  };

  /// Tokenises `stream`'s documents from where it is (it is owned from here on). With workers, a reader thread
  /// and `options.workers` tokenising threads start at once.
  StreamTokens(std::unique_ptr<DocumentStream> stream, const Options& options);
  ~StreamTokens();  ///< stops and joins the threads
  StreamTokens(const StreamTokens&) = delete;
  StreamTokens& operator=(const StreamTokens&) = delete;

  /// The next chunk. Throws sdk::Error naming the file and line of a line that is not a document (not JSON, no
  /// string text field), or what reading the files threw.
  TokenChunk next();

 private:
  struct Cut {  ///< a chunk's side of the pipeline: its position and each document's file and line
    StreamPosition before;
    std::vector<StreamedDocument> where;  ///< texts cleared
  };
  void cut(data::TextChunk& chunk, Cut& cut);  ///< the next kChunkDocuments documents
  TokenChunk finish(data::EncodedChunk& encoded, Cut& cut) const;
  void run();  ///< the background thread: run_in_order until stopped

  std::unique_ptr<DocumentStream> stream_;
  Options options_;
  data::ChunkEncoding how_;
  std::mutex m_;
  std::condition_variable changed_;
  std::deque<Cut> cuts_;          ///< cut, not yet finished (the reader's to the consumer's thread)
  std::deque<TokenChunk> ready_;  ///< finished, not yet taken by next()
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kforge::feed
