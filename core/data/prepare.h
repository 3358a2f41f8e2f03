// prepare_data: text files (plain or JSON Lines, optionally gzip / zstd / xz compressed, streamed) -> tokens on
// every core -> train/eval .npy shards with a document index per shard + metadata.json. Memory holds the
// chunks in flight (about 2 x threads + 2 of chunk_bytes each, with their tokens) and the longest line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/document_chunks.h"
#include "data/npy_writer.h"

namespace kforge::data {

struct PrepareOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path output;
  bool train_tokenizer = false;  ///< train OUTPUT/tokenizer.model (vocab_size, model_type)...
  int vocab_size = 0;
  std::string model_type = "bpe";
  std::filesystem::path tokenizer;  ///< ...or use this tokenizer file
  double eval_fraction = 0.05;      ///< the last fraction of documents goes to eval/
  int64_t shard_tokens = 50'000'000;
  DocumentSplit split = DocumentSplit::paragraphs;  ///< of plain-text inputs
  std::optional<InputFormat> format;                ///< every input's; unset: format_from_name per input
  std::string text_field = "text";                  ///< JSON Lines: the member holding the document text
  bool skip_bad_lines = false;     ///< JSON Lines: skip (and count) lines without a text, instead of failing
  /// What the error of a bad line (with skip_bad_lines off) tells the user to do.
  std::string bad_line_advice = "fix the line, or pass --skip-bad-lines to skip and count such lines";
  int threads = 0;                 ///< encoding threads; 0: std::thread::hardware_concurrency()
  size_t chunk_bytes = 1u << 20;   ///< text handed to a thread at once (whole documents)
  size_t read_bytes = 256u << 10;  ///< read block size
  bool overwrite = false;  ///< replace tokens_*.npy already in OUTPUT/train and OUTPUT/eval
  bool progress = true;    ///< progress on stderr for inputs of 4 MB or more
};

struct PrepareResult {
  std::filesystem::path tokenizer, metadata;
  std::string tokenizer_kind;  ///< Tokenizer::kind() of the tokenizer used
  int vocab_size = 0, eos_id = -1;
  TokenDtype dtype = TokenDtype::uint16;
  int64_t train_documents = 0, eval_documents = 0, train_tokens = 0, eval_tokens = 0;
  int64_t skipped_lines = 0, empty_documents = 0;
  std::vector<std::filesystem::path> train_shards, eval_shards;
  uint64_t text_bytes = 0;    ///< decompressed text read by the encoding pass
  double encode_seconds = 0;  ///< wall time of the encoding pass (reading, encoding, writing)
  double encode_cpu_seconds = 0;  ///< CPU time (user + system, every thread) of the encoding pass
  int threads = 0;            ///< encoding threads used
};

/// Throws kforge::sdk::Error (bad input, unwritable output, tokenizer failure) naming what and why: a JSON
/// Lines line without a text names its file and line (unless skip_bad_lines), damaged compressed data its
/// file and how far it was read.
PrepareResult prepare_data(const PrepareOptions& options);

}  // namespace kforge::data
