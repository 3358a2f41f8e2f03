// prepare_data: text files -> SentencePiece tokens -> train/eval .npy shards + metadata.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/npy_writer.h"

namespace kforge::data {

enum class DocumentSplit { paragraphs, lines };  ///< documents end at blank lines, or each line is one

struct PrepareOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path output;
  bool train_tokenizer = false;  ///< train OUTPUT/tokenizer.model (vocab_size, model_type)...
  int vocab_size = 0;
  std::string model_type = "bpe";
  std::filesystem::path tokenizer;  ///< ...or use this SentencePiece model
  double eval_fraction = 0.05;      ///< the last fraction of documents goes to eval/
  int64_t shard_tokens = 50'000'000;
  DocumentSplit split = DocumentSplit::paragraphs;
  bool overwrite = false;  ///< replace tokens_*.npy already in OUTPUT/train and OUTPUT/eval
  bool progress = true;    ///< percentage on stderr for inputs of 4 MB or more
};

struct PrepareResult {
  std::filesystem::path tokenizer, metadata;
  int vocab_size = 0, eos_id = -1;
  TokenDtype dtype = TokenDtype::uint16;
  int64_t train_documents = 0, eval_documents = 0, train_tokens = 0, eval_tokens = 0;
  std::vector<std::filesystem::path> train_shards, eval_shards;
};

/// Throws kforge::sdk::Error (bad input, unwritable output, tokenizer failure) naming what and why.
PrepareResult prepare_data(const PrepareOptions& options);

}  // namespace kforge::data
