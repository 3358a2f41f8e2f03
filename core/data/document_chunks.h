// DocumentChunks: the inputs of prepare-data cut into chunks of whole documents (plain text: paragraphs or
// lines; JSON Lines: one document a line, parsed later), read one block at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace kforge::data {

enum class DocumentSplit { paragraphs, lines };  ///< plain text: documents end at blank lines, or each line is one
enum class InputFormat { text, jsonl };

/// One input's format from its name: jsonl for *.jsonl / *.ndjson (after a compression suffix such as .gz,
/// .zst or .xz), else text.
InputFormat format_from_name(const std::filesystem::path& path);

/// Consecutive whole documents of one input. The documents never span inputs or chunks.
struct TextChunk {
  struct Line {
    size_t offset = 0, size = 0;  ///< in `text`, without the newline (and a trailing '\r')
    int64_t number = 0;           ///< 1-based line number in its input
    uint64_t position = 0;        ///< byte offset of the line's start in its input's (decompressed) text
  };
  size_t input = 0;             ///< index of the input file
  uint64_t input_position = 0;  ///< bytes of all input files consumed when this chunk was cut
  uint64_t text_bytes = 0;      ///< decompressed bytes of the input this chunk covers, newlines and blank lines too
  std::string text;             ///< the non-blank lines, back to back
  std::vector<Line> lines;
  /// Document k is lines [doc_ends[k-1], doc_ends[k]) (from 0 for k = 0); in JSON Lines, one line each.
  std::vector<size_t> doc_ends;
};

/// What one input turned out to hold, known once it has been read through.
struct InputSummary {
  std::string compression = "none";
  uint64_t text_bytes = 0;
};

class InputStream;

class DocumentChunks {
 public:
  /// Chunks are cut at the first document end after `chunk_bytes` of text; `block_bytes` is the read size.
  DocumentChunks(std::vector<std::filesystem::path> inputs, std::vector<InputFormat> formats, DocumentSplit split,
                 size_t chunk_bytes, size_t block_bytes);
  ~DocumentChunks();

  /// The next chunk (replacing `chunk`); false once every input has been read. Throws kforge::sdk::Error
  /// naming the file on read errors (damaged or truncated compressed data).
  bool next(TextChunk& chunk);
  const std::vector<InputSummary>& summaries() const { return summaries_; }

 private:
  bool next_line(std::string_view& line);  ///< false at the end of the current input
  void add_line(TextChunk& chunk, std::string_view line);

  std::vector<std::filesystem::path> inputs_;
  std::vector<InputFormat> formats_;
  DocumentSplit split_;
  size_t chunk_bytes_, block_bytes_;
  std::vector<InputSummary> summaries_;
  size_t input_ = 0;              ///< the input being read (inputs_.size() at the end)
  uint64_t done_file_bytes_ = 0;  ///< sizes of the inputs read through
  std::unique_ptr<InputStream> stream_;
  std::string_view block_;  ///< what is left of the last block read
  std::string carry_;       ///< a line that started in an earlier block
  bool carry_returned_ = false;
  int64_t line_number_ = 0;
  uint64_t line_start_ = 0;        ///< text byte offset of the line next_line returned last
  uint64_t chunk_start_text_ = 0;  ///< stream text bytes when the current chunk began
};

}  // namespace kforge::data
