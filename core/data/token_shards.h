// TokenShards: a directory of token shards (tokens_000.npy, ...) of at most shard_tokens tokens each, and
// for each shard its document index (tokens_000.docs.npy in a second directory).
//
// The document index of a shard is a 1-D int64 .npy array: the offset, within that shard, of the first token
// of each document that starts in it, ascending. Documents are written back to back (each ends with EOS) and
// continue across shard boundaries, so every shard but the last holds exactly shard_tokens tokens; the tokens
// of a shard before its first offset (all of them when the index is empty) continue the previous shard's
// last document.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "data/npy_writer.h"

namespace kforge::data {

class TokenShards {
 public:
  TokenShards(std::filesystem::path token_dir, std::filesystem::path index_dir, TokenDtype dtype, int64_t shard_tokens);
  ~TokenShards();

  /// Appends one document (its ids, EOS included).
  void append_document(const int* ids, size_t n);
  /// Closes the last shard and names the shards with enough digits (3 or more) that they sort in order.
  void close();

  int64_t tokens() const { return tokens_; }
  int64_t documents() const { return documents_; }
  const std::vector<std::filesystem::path>& files() const { return files_; }
  const std::vector<std::filesystem::path>& index_files() const { return index_files_; }

 private:
  void roll();
  void close_shard();
  std::filesystem::path token_dir_, index_dir_;
  TokenDtype dtype_;
  int64_t shard_tokens_;
  std::unique_ptr<NpyTokenWriter> writer_;
  std::vector<int64_t> starts_;  ///< of the open shard's documents
  std::vector<std::filesystem::path> files_, index_files_;
  int64_t tokens_ = 0, documents_ = 0;
};

/// Writes `values` as a 1-D little-endian int64 .npy file.
void write_npy_int64(const std::filesystem::path& path, const std::vector<int64_t>& values);

}  // namespace kforge::data
