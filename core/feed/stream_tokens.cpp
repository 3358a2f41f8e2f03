// StreamTokens: run_in_order on a background thread; its consume step hands finished chunks to next() through a
// queue that holds one at most, so the read-ahead is run_in_order's bound.
#include "feed/stream_tokens.h"

#include <fmt/format.h>

#include "data/ordered_pool.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"

namespace kforge::feed {
namespace {

struct Stopped {};  ///< thrown through run_in_order to end it when the StreamTokens goes

}  // namespace

StreamTokens::StreamTokens(std::unique_ptr<DocumentStream> stream, const Options& options)
    : stream_(std::move(stream)), options_(options) {
  how_.tokenizer = options.tokenizer;
  how_.eos_id = options.tokenizer->eos_id();
  how_.text_field = options.text_field;
  if (options_.workers > 0) thread_ = std::thread([this] { run(); });
}

StreamTokens::~StreamTokens() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StreamTokens::cut(data::TextChunk& chunk, Cut& cut) {
  cut.before = stream_->position();
  chunk = data::TextChunk{};
  for (int64_t k = 0; k < kChunkDocuments; ++k) {
    StreamedDocument doc = stream_->next();
    // A line's number is its index in the chunk, so that a bad line names its document's file and line in `cut`.
    chunk.lines.push_back({chunk.text.size(), doc.text.size(), k, doc.ref.offset});
    chunk.text += doc.text;
    chunk.doc_ends.push_back(chunk.lines.size());
    doc.text.clear();
    cut.where.push_back(std::move(doc));
  }
}

TokenChunk StreamTokens::finish(data::EncodedChunk& encoded, Cut& cut) const {
  if (!encoded.bad_lines.empty()) {
    const data::BadLine& bad = encoded.bad_lines.front();
    const StreamedDocument& doc = cut.where.at(static_cast<size_t>(bad.line));
    throw sdk::Error(fmt::format("input '{}' line {}: {}; fix or remove the line in the export",
                                 stream_->files().at(static_cast<size_t>(doc.ref.file)).string(), doc.line,
                                 bad.reason));
  }
  return {std::move(cut.before), std::move(encoded.tokens)};
}

TokenChunk StreamTokens::next() {
  if (options_.workers == 0) {
    data::TextChunk chunk;
    Cut c;
    cut(chunk, c);
    data::EncodedChunk encoded = data::encode_chunk(chunk, data::InputFormat::jsonl, how_);
    return finish(encoded, c);
  }
  std::unique_lock lock(m_);
  changed_.wait(lock, [&] { return !ready_.empty() || error_; });
  if (ready_.empty()) std::rethrow_exception(error_);
  TokenChunk out = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  return out;
}

void StreamTokens::run() {
  data::OrderedPoolSteps steps;
  steps.produce = [&](data::TextChunk& chunk) {
    {
      std::lock_guard lock(m_);
      if (stop_) return false;
    }
    Cut c;
    cut(chunk, c);
    std::lock_guard lock(m_);
    cuts_.push_back(std::move(c));
    return true;
  };
  steps.work = [&](const data::TextChunk& chunk) {
    return data::encode_chunk(chunk, data::InputFormat::jsonl, how_);
  };
  steps.consume = [&](data::EncodedChunk& encoded) {
    Cut c;
    {
      std::lock_guard lock(m_);
      c = std::move(cuts_.front());
      cuts_.pop_front();
    }
    TokenChunk done = finish(encoded, c);
    std::unique_lock lock(m_);
    changed_.wait(lock, [&] { return stop_ || ready_.empty(); });
    if (stop_) throw Stopped{};
    ready_.push_back(std::move(done));
    changed_.notify_all();
  };
  try {
    data::run_in_order(options_.workers, options_.ahead, steps);
  } catch (const Stopped&) {
  } catch (...) {
    std::lock_guard lock(m_);
    error_ = std::current_exception();
  }
  std::lock_guard lock(m_);
  if (!error_ && !stop_) error_ = std::make_exception_ptr(sdk::Error("the document stream ended"));
  changed_.notify_all();
}

}  // namespace kforge::feed
