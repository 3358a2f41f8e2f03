// DocumentStream: the documents of JSON Lines files read lazily, shuffled in a bounded buffer and dealt to the
// data-parallel ranks in turn ([data] hf_streaming), with a position that restores the stream exactly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/document_chunks.h"

namespace kforge::feed {

/// Where a document is: its file (an index into the stream's files) and its line's byte offset in the file's
/// decompressed text.
struct DocumentRef {
  int64_t file = 0;
  uint64_t offset = 0;
  bool operator==(const DocumentRef& o) const { return file == o.file && offset == o.offset; }
};

/// A document of this rank's share: where it is, its 1-based line number and the line's text.
struct StreamedDocument {
  DocumentRef ref;
  int64_t line = 0;
  std::string text;
};

/// The state between two documents: with it, a stream over the same files continues exactly where it was.
struct StreamPosition {
  int64_t epoch = 0;
  int64_t document = 0;  ///< global index (over all ranks' shares) of the next document the buffer gives
  DocumentRef next;      ///< the reader resumes at the first line of `next.file` at or past `next.offset`
  uint64_t rng = 0;      ///< the shuffle generator's state
  std::vector<DocumentRef> buffer;  ///< the shuffle buffer's documents, in buffer order

  nlohmann::json to_json() const;
  static StreamPosition from_json(const nlohmann::json& j);  ///< throws sdk::Error naming a missing member
};

class DocumentStream {
 public:
  /// The files' documents in one order shared by every rank: the buffer of `buffer_size` documents is filled in file
  /// order and gives a uniformly drawn one each time (its place refilled from the files), the generator seeded by
  /// `seed` and the epoch; at the files' end the buffer drains and the next epoch starts over. Document i of that
  /// order goes to rank i % `ranks`; this stream gives rank `rank`'s.
  DocumentStream(std::vector<std::filesystem::path> files, int64_t buffer_size, uint64_t seed, int64_t rank,
                 int64_t ranks);
  ~DocumentStream();

  /// The next document of this rank's share. Throws sdk::Error when the files hold no document.
  StreamedDocument next();
  /// Where the stream is (the buffer as references; the texts are re-read on restore).
  StreamPosition position() const;
  /// Continues from `p` (written by a stream over the same files, with any rank count): re-reads the buffer's
  /// documents and skips the reader to p.next. Throws sdk::Error naming the file when a document is not where `p`
  /// says (the file changed since).
  void restore(const StreamPosition& p);
  const std::vector<std::filesystem::path>& files() const { return files_; }

 private:
  struct Buffered {
    DocumentRef ref;
    int64_t line = 0;
    std::string text;
  };
  bool read(Buffered& out);  ///< the reader's next document; false at the end of the files
  void open_reader(int64_t file, uint64_t offset);
  uint64_t draw(uint64_t n);  ///< uniform in [0, n)
  Buffered next_global();

  std::vector<std::filesystem::path> files_;
  size_t buffer_size_;
  uint64_t seed_;
  int64_t rank_, ranks_;
  int64_t epoch_ = 0, document_ = 0;
  uint64_t rng_ = 0;
  std::vector<Buffered> buffer_;
  // The reader: files_[reader_base_ ...] in chunks; lines before skip_ of its first file are passed over.
  std::unique_ptr<data::DocumentChunks> reader_;
  int64_t reader_base_ = 0;
  uint64_t skip_ = 0;
  data::TextChunk chunk_;
  size_t chunk_line_ = 0;
  DocumentRef next_;  ///< where the reader resumes
};

/// The generator's state at the start of `epoch` of a stream seeded by `seed`.
uint64_t stream_epoch_state(uint64_t seed, int64_t epoch);

}  // namespace kforge::feed
