// DocumentStream: DocumentChunks reads the files (decompressing on the fly); a splitmix64 generator draws from the
// buffer; a position names documents by file and byte offset, so restoring re-reads them instead of storing texts.
#include "feed/document_stream.h"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "kforge/sdk/error.h"

namespace kforge::feed {
namespace {

constexpr size_t kStreamChunkBytes = 64u << 10, kStreamBlockBytes = 256u << 10;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::unique_ptr<data::DocumentChunks> stream_chunks(std::vector<std::filesystem::path> files) {
  std::vector<data::InputFormat> formats(files.size(), data::InputFormat::jsonl);
  return std::make_unique<data::DocumentChunks>(std::move(files), std::move(formats), data::DocumentSplit::lines,
                                                kStreamChunkBytes, kStreamBlockBytes);
}

}  // namespace

uint64_t stream_epoch_state(uint64_t seed, int64_t epoch) {
  uint64_t state = seed;
  const uint64_t mixed = splitmix64(state);
  state = mixed ^ static_cast<uint64_t>(epoch);
  splitmix64(state);
  return state;
}

nlohmann::json StreamPosition::to_json() const {
  std::vector<int64_t> files;
  std::vector<uint64_t> offsets;
  for (const DocumentRef& r : buffer) {
    files.push_back(r.file);
    offsets.push_back(r.offset);
  }
  return {{"epoch", epoch},     {"document", document},      {"file", next.file},
          {"offset", next.offset}, {"rng", rng}, {"buffer_files", files}, {"buffer_offsets", offsets}};
}

StreamPosition StreamPosition::from_json(const nlohmann::json& j) {
  try {
    StreamPosition p;
    p.epoch = j.at("epoch").get<int64_t>();
    p.document = j.at("document").get<int64_t>();
    p.next = {j.at("file").get<int64_t>(), j.at("offset").get<uint64_t>()};
    p.rng = j.at("rng").get<uint64_t>();
    const auto files = j.at("buffer_files").get<std::vector<int64_t>>();
    const auto offsets = j.at("buffer_offsets").get<std::vector<uint64_t>>();
    if (files.size() != offsets.size()) throw sdk::Error("buffer_files and buffer_offsets differ in length");
    for (size_t i = 0; i < files.size(); ++i) p.buffer.push_back({files[i], offsets[i]});
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw sdk::Error(fmt::format("the checkpoint's stream position is damaged: {}", e.what()));
  }
}

DocumentStream::DocumentStream(std::vector<std::filesystem::path> files, int64_t buffer_size, uint64_t seed,
                               int64_t rank, int64_t ranks)
    : files_(std::move(files)),
      buffer_size_(static_cast<size_t>(std::max<int64_t>(buffer_size, 1))),
      seed_(seed),
      rank_(rank),
      ranks_(std::max<int64_t>(ranks, 1)),
      rng_(stream_epoch_state(seed, 0)) {
  open_reader(0, 0);
}

DocumentStream::~DocumentStream() = default;

void DocumentStream::open_reader(int64_t file, uint64_t offset) {
  next_ = {file, offset};
  chunk_ = data::TextChunk{};
  chunk_line_ = 0;
  reader_base_ = file;
  skip_ = offset;
  if (file >= static_cast<int64_t>(files_.size())) {
    reader_.reset();
    return;
  }
  reader_ = stream_chunks({files_.begin() + file, files_.end()});
}

bool DocumentStream::read(Buffered& out) {
  while (reader_) {
    if (chunk_line_ < chunk_.lines.size()) {
      const data::TextChunk::Line& line = chunk_.lines[chunk_line_++];
      const int64_t file = reader_base_ + static_cast<int64_t>(chunk_.input);
      if (file == reader_base_ && line.position < skip_) continue;
      out = {{file, line.position}, line.number, chunk_.text.substr(line.offset, line.size)};
      next_ = {file, line.position + 1};  // a resumed reader passes over this line and the ones before it
      return true;
    }
    if (!reader_->next(chunk_)) open_reader(static_cast<int64_t>(files_.size()), 0);
    chunk_line_ = 0;
  }
  return false;
}

uint64_t DocumentStream::draw(uint64_t n) {
  const uint64_t reject_from = std::numeric_limits<uint64_t>::max() - (std::numeric_limits<uint64_t>::max() % n);
  uint64_t x = splitmix64(rng_);
  while (x >= reject_from) x = splitmix64(rng_);
  return x % n;
}

DocumentStream::Buffered DocumentStream::next_global() {
  const auto fill = [&] {
    Buffered b;
    while (buffer_.size() < buffer_size_ && read(b)) buffer_.push_back(std::move(b));
  };
  fill();
  if (buffer_.empty()) {  // the epoch's files are read through and its buffer drained: the next one starts over
    ++epoch_;
    rng_ = stream_epoch_state(seed_, epoch_);
    open_reader(0, 0);
    fill();
    if (buffer_.empty()) {
      throw sdk::Error(fmt::format("the streamed files ({} of them, the first '{}') hold no document",
                                   files_.size(), files_.empty() ? std::string() : files_.front().string()));
    }
  }
  const size_t i = static_cast<size_t>(draw(buffer_.size()));
  Buffered out = std::move(buffer_[i]);
  if (i + 1 != buffer_.size()) buffer_[i] = std::move(buffer_.back());
  buffer_.pop_back();
  ++document_;
  return out;
}

StreamedDocument DocumentStream::next() {
  while (true) {
    Buffered b = next_global();
    if ((document_ - 1) % ranks_ == rank_) return {b.ref, b.line, std::move(b.text)};
  }
}

StreamPosition DocumentStream::position() const {
  StreamPosition p{epoch_, document_, next_, rng_, {}};
  p.buffer.reserve(buffer_.size());
  for (const Buffered& b : buffer_) p.buffer.push_back(b.ref);
  return p;
}

void DocumentStream::restore(const StreamPosition& p) {
  const auto n_files = static_cast<int64_t>(files_.size());
  if (p.next.file < 0 || p.next.file > n_files) {
    throw sdk::Error(fmt::format("the checkpoint's stream reads file {} of {}: the export has other files now",
                                 p.next.file, n_files));
  }
  // Each file holding buffered documents is read once, up to its last one.
  std::map<int64_t, std::map<uint64_t, Buffered>> wanted;
  for (const DocumentRef& r : p.buffer) {
    if (r.file < 0 || r.file >= n_files) {
      throw sdk::Error(fmt::format("the checkpoint's stream buffer holds a document of file {} of {}: the export has "
                                   "other files now",
                                   r.file, n_files));
    }
    wanted[r.file][r.offset] = Buffered{r, 0, {}};
  }
  for (auto& [file, docs] : wanted) {
    const auto chunks = stream_chunks({files_[static_cast<size_t>(file)]});
    data::TextChunk chunk;
    size_t found = 0;
    while (found < docs.size() && chunks->next(chunk)) {
      for (const data::TextChunk::Line& line : chunk.lines) {
        const auto it = docs.find(line.position);
        if (it == docs.end()) continue;
        it->second.line = line.number;
        it->second.text = chunk.text.substr(line.offset, line.size);
        ++found;
      }
    }
    if (found < docs.size()) {
      for (const auto& [offset, doc] : docs) {
        if (doc.line == 0) {
          throw sdk::Error(fmt::format("'{}' has no line at byte {} where the checkpoint's stream buffer has a "
                                       "document: the export changed since the checkpoint was written",
                                       files_[static_cast<size_t>(file)].string(), offset));
        }
      }
    }
  }
  buffer_.clear();
  for (const DocumentRef& r : p.buffer) buffer_.push_back(wanted[r.file][r.offset]);
  epoch_ = p.epoch;
  document_ = p.document;
  rng_ = p.rng;
  open_reader(p.next.file, p.next.offset);
}

}  // namespace kforge::feed
