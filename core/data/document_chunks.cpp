// DocumentChunks: lines are found with memchr in each block; a line that spans blocks is carried over.
#include "data/document_chunks.h"

#include <cstring>

#include "data/input_stream.h"

namespace kforge::data {
namespace {

bool chunk_line_blank(std::string_view line) { return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos; }

}  // namespace

InputFormat format_from_name(const std::filesystem::path& path) {
  std::filesystem::path name = path.filename();
  for (const char* suffix : {".gz", ".zst", ".zstd", ".xz", ".bz2", ".lz4"}) {
    if (name.extension() == suffix) {
      name = name.stem();
      break;
    }
  }
  return name.extension() == ".jsonl" || name.extension() == ".ndjson" ? InputFormat::jsonl : InputFormat::text;
}

DocumentChunks::DocumentChunks(std::vector<std::filesystem::path> inputs, std::vector<InputFormat> formats,
                               DocumentSplit split, size_t chunk_bytes, size_t block_bytes)
    : inputs_(std::move(inputs)),
      formats_(std::move(formats)),
      split_(split),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      block_bytes_(block_bytes),
      summaries_(inputs_.size()) {}

DocumentChunks::~DocumentChunks() = default;

bool DocumentChunks::next_line(std::string_view& line) {
  if (carry_returned_) {
    carry_.clear();
    carry_returned_ = false;
  }
  while (true) {
    if (!block_.empty()) {
      const void* newline = std::memchr(block_.data(), '\n', block_.size());
      if (newline != nullptr) {
        const size_t n = static_cast<size_t>(static_cast<const char*>(newline) - block_.data());
        if (carry_.empty()) {
          line = block_.substr(0, n);
        } else {
          carry_.append(block_.data(), n);
          line = carry_;
          carry_returned_ = true;
        }
        block_.remove_prefix(n + 1);
        line_start_ = stream_->text_bytes() - block_.size() - line.size() - 1;
        ++line_number_;
        return true;
      }
      carry_.append(block_);
      block_ = {};
    }
    block_ = stream_->read();
    if (block_.empty()) {
      if (carry_.empty()) return false;
      line = carry_;  // the last line has no newline
      carry_returned_ = true;
      line_start_ = stream_->text_bytes() - line.size();
      ++line_number_;
      return true;
    }
  }
}

void DocumentChunks::add_line(TextChunk& chunk, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const bool open_doc = !chunk.lines.empty() && (chunk.doc_ends.empty() || chunk.doc_ends.back() < chunk.lines.size());
  if (chunk_line_blank(line)) {
    if (open_doc) chunk.doc_ends.push_back(chunk.lines.size());
    return;
  }
  chunk.lines.push_back({chunk.text.size(), line.size(), line_number_, line_start_});
  chunk.text.append(line);
  if (formats_[input_] == InputFormat::jsonl || split_ == DocumentSplit::lines) {
    chunk.doc_ends.push_back(chunk.lines.size());
  }
}

bool DocumentChunks::next(TextChunk& chunk) {
  chunk = TextChunk{};
  while (input_ < inputs_.size()) {
    if (!stream_) {
      stream_ = std::make_unique<InputStream>(inputs_[input_], block_bytes_);
      summaries_[input_].compression = stream_->compression();
      line_number_ = 0;
      chunk_start_text_ = 0;
    }
    chunk.input = input_;
    std::string_view line;
    while (next_line(line)) {
      add_line(chunk, line);
      const bool at_doc_end = !chunk.doc_ends.empty() && chunk.doc_ends.back() == chunk.lines.size();
      if (at_doc_end && chunk.text.size() >= chunk_bytes_) {
        const uint64_t consumed = stream_->text_bytes() - block_.size();
        chunk.text_bytes = consumed - chunk_start_text_;
        chunk_start_text_ = consumed;
        chunk.input_position = done_file_bytes_ + stream_->file_bytes();
        return true;
      }
    }
    // The input is read through: its last document ends here (a document never spans inputs).
    if (!chunk.lines.empty() && (chunk.doc_ends.empty() || chunk.doc_ends.back() < chunk.lines.size())) {
      chunk.doc_ends.push_back(chunk.lines.size());
    }
    chunk.text_bytes = stream_->text_bytes() - chunk_start_text_;
    summaries_[input_].text_bytes = stream_->text_bytes();
    done_file_bytes_ += stream_->file_bytes();
    chunk.input_position = done_file_bytes_;
    stream_.reset();
    block_ = {};
    carry_.clear();
    carry_returned_ = false;
    ++input_;
    if (!chunk.lines.empty() || chunk.text_bytes > 0) return true;
  }
  return false;
}

}  // namespace kforge::data
