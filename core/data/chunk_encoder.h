// encode_chunk: a chunk of documents to token ids (each document followed by EOS), parsing JSON Lines on the
// way; lines that are not a document are reported back, not thrown, so the caller handles them in input order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/document_chunks.h"

namespace kforge::data {

class Tokenizer;

struct BadLine {
  int64_t line = 0;
  std::string reason;  ///< e.g. "not valid JSON (...)", "no string field \"text\""
};

struct EncodedChunk {
  size_t input = 0;
  uint64_t input_position = 0, text_bytes = 0;  ///< as in the TextChunk
  std::vector<int> tokens;                      ///< every document's ids, each followed by EOS
  std::vector<int64_t> document_tokens;         ///< tokens of each document, EOS included
  int64_t documents = 0;                        ///< == document_tokens.size() when encoded
  int64_t empty_documents = 0;                  ///< JSON Lines whose text is "" (no document)
  std::vector<BadLine> bad_lines;
};

struct ChunkEncoding {
  const Tokenizer* tokenizer = nullptr;  ///< null: only count the documents (and check JSON Lines)
  int eos_id = -1;
  std::string text_field = "text";  ///< the JSON Lines member holding a document's text
};

/// Plain-text documents encode line by line (lines of a paragraph are concatenated without a separator, as
/// SentencePiece marks each word start); a JSON Lines document's text encodes whole.
EncodedChunk encode_chunk(const TextChunk& chunk, InputFormat format, const ChunkEncoding& how);

}  // namespace kforge::data
