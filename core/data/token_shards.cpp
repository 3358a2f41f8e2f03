// TokenShards: shards are numbered as they open and renamed to their final digit count on close.
#include "data/token_shards.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace fs = std::filesystem;
namespace {

std::string token_shard_name(size_t index, int width, const char* suffix) {
  return fmt::format("tokens_{:0{}}{}", index, width, suffix);
}

}  // namespace

void write_npy_int64(const fs::path& path, const std::vector<int64_t>& values) {
  std::string bytes = npy_header("<i8", {static_cast<int64_t>(values.size())});
  const size_t header = bytes.size();
  bytes.resize(header + 8 * values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<uint64_t>(values[i]);
    for (int b = 0; b < 8; ++b) bytes[header + 8 * i + b] = static_cast<char>((v >> (8 * b)) & 0xff);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw sdk::Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
}

TokenShards::TokenShards(fs::path token_dir, fs::path index_dir, TokenDtype dtype, int64_t shard_tokens)
    : token_dir_(std::move(token_dir)), index_dir_(std::move(index_dir)), dtype_(dtype), shard_tokens_(shard_tokens) {}

TokenShards::~TokenShards() = default;

void TokenShards::append_document(const int* ids, size_t n) {
  if (!writer_ || writer_->size() >= shard_tokens_) roll();
  starts_.push_back(writer_->size());
  ++documents_;
  size_t at = 0;
  while (at < n) {
    if (writer_->size() >= shard_tokens_) roll();
    const size_t count = std::min(static_cast<size_t>(shard_tokens_ - writer_->size()), n - at);
    writer_->append(ids + at, count);
    at += count;
    tokens_ += static_cast<int64_t>(count);
  }
}

void TokenShards::roll() {
  close_shard();
  const size_t index = files_.size();
  files_.push_back(token_dir_ / token_shard_name(index, 3, ".npy"));
  index_files_.push_back(index_dir_ / token_shard_name(index, 3, ".docs.npy"));
  writer_ = std::make_unique<NpyTokenWriter>(files_.back(), dtype_);
}

void TokenShards::close_shard() {
  if (!writer_) return;
  writer_->close();
  writer_.reset();
  write_npy_int64(index_files_.back(), starts_);
  starts_.clear();
}

void TokenShards::close() {
  close_shard();
  if (files_.empty()) return;
  int width = 3;  // tokens_000 .. tokens_999, then 4 digits, ...
  for (size_t n = files_.size() - 1; n >= 1000; n /= 10) ++width;
  if (width == 3) return;
  for (size_t i = 0; i < files_.size(); ++i) {
    for (auto* list : {&files_, &index_files_}) {
      fs::path& from = (*list)[i];
      const fs::path to = from.parent_path() / token_shard_name(i, width, list == &files_ ? ".npy" : ".docs.npy");
      std::error_code ec;
      fs::rename(from, to, ec);
      if (ec) throw sdk::Error(fmt::format("cannot rename '{}' to '{}': {}", from.string(), to.string(), ec.message()));
      from = to;
    }
  }
}

}  // namespace kforge::data
