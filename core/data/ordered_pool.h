// run_in_order: a reader thread makes chunks, worker threads encode them, and the calling thread consumes the
// results in the order the chunks were made, so the output never depends on the number of workers.
#pragma once

#include <cstddef>
#include <functional>

#include "data/chunk_encoder.h"
#include "data/document_chunks.h"

namespace kforge::data {

struct OrderedPoolSteps {
  std::function<bool(TextChunk&)> produce;             ///< on the reader thread; false at the end
  std::function<EncodedChunk(const TextChunk&)> work;  ///< on `threads` worker threads
  std::function<void(EncodedChunk&)> consume;          ///< on the calling thread, in order
};

/// At most `max_in_flight` chunks (read, being encoded or waiting to be consumed) exist at once, which
/// bounds the memory. An exception from any step is rethrown here once every chunk before the one that
/// threw has been consumed (so the first error in input order wins); the threads are joined first.
void run_in_order(int threads, size_t max_in_flight, const OrderedPoolSteps& steps);

}  // namespace kforge::data
