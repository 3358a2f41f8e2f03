// MemmapDataset: shard mapping, window index -> (shard, offset) by binary search, uint16/32 -> int64.
#include "memmap_dataset.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "kforge/sdk/error.h"
#include "npy_header.h"
#include "prepared_vocab.h"
#include "token_scan.h"

namespace kforge::builtin::data {
namespace {

template <class T>
void widen(const unsigned char* src, int64_t n, int64_t* dst) {
  const T* p = reinterpret_cast<const T*>(src);  // little-endian host, as the formats are
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int64_t>(p[i]);
}

std::string dtype_name(size_t itemsize) { return itemsize == 2 ? "uint16" : "uint32"; }

}  // namespace

BinDtype parse_bin_dtype(const std::string& value) {
  if (value.empty()) return BinDtype::unset;
  if (value == "uint16") return BinDtype::uint16;
  if (value == "uint32") return BinDtype::uint32;
  throw sdk::ConfigError(
      fmt::format("[data] bin_dtype = \"{}\" is not supported; use \"uint16\" or \"uint32\"", value));
}

MemmapDataset::MemmapDataset(const sdk::DatasetSpec& spec, BinDtype bin_dtype, sdk::Logger* log) : spec_(spec) {
  if (spec.window < 2) {
    throw sdk::ConfigError(fmt::format("memmap dataset: window of {} tokens is too small (train.seq_len must be >= 1)",
                                       spec.window));
  }
  const std::vector<std::string> paths = find_shards(spec.path, spec.file_pattern);
  const std::optional<PreparedVocab> vocab = find_prepared_vocab(spec.path, log);
  for (const std::string& path : paths) {
    const std::string ext = std::filesystem::path(path).extension().string();
    Shard s;
    if (ext == ".npy") {
      s.file = std::make_unique<MappedFile>(path);
      const NpyInfo info = parse_npy_header(path, s.file->data(), s.file->size());
      s.tokens = s.file->data() + info.data_offset;
      s.itemsize = info.itemsize;
      s.length = info.length;
    } else if (ext == ".bin") {
      if (bin_dtype == BinDtype::unset) {
        throw sdk::ConfigError(fmt::format(
            "{}: raw .bin shards carry no dtype; set [data] bin_dtype = \"uint16\" or \"uint32\" to the token width "
            "they were written with (kforge never guesses it from the file size)",
            path));
      }
      s.file = std::make_unique<MappedFile>(path);
      s.itemsize = bin_dtype == BinDtype::uint16 ? 2 : 4;
      if (s.file->size() % s.itemsize != 0) {
        throw sdk::Error(fmt::format("{}: {} bytes is not a whole number of {} tokens; is [data] bin_dtype right?",
                                     path, s.file->size(), dtype_name(s.itemsize)));
      }
      s.tokens = s.file->data();
      s.length = static_cast<int64_t>(s.file->size() / s.itemsize);
    } else {
      throw sdk::Error(fmt::format("{}: unsupported shard extension '{}' (the memmap dataset reads .npy and .bin); "
                                   "narrow [data] file_pattern",
                                   path, ext));
    }
    s.max_id = max_token_id_in_file(path, static_cast<uint64_t>(s.tokens - s.file->data()), s.length, s.itemsize);
    if (vocab && s.max_id >= vocab->vocab_size && vocab->shards.count(normalised_shard_path(path)) != 0) {
      const int64_t at = first_token_at_least(s.tokens, s.length, s.itemsize, vocab->vocab_size);
      throw sdk::Error(
          fmt::format("{}: token id {} at position {} is outside the vocabulary of {} ids (vocab_size in "
                      "{}); the shard is corrupt or was written with another tokenizer: re-run "
                      "kforge prepare-data",
                      path, token_at(s.tokens, at, s.itemsize), at, vocab->vocab_size, vocab->metadata));
    }
    if (spec.vocab_size > 0 && s.max_id >= spec.vocab_size) {
      const int64_t at = first_token_at_least(s.tokens, s.length, s.itemsize, spec.vocab_size);
      throw sdk::Error(fmt::format("{}: token id {} at position {} is >= [model] vocab_size {}; set vocab_size to the "
                                   "tokenizer's vocabulary (prepare-data's metadata.json vocab_size) or re-tokenise "
                                   "the data",
                                   path, token_at(s.tokens, at, s.itemsize), at, spec.vocab_size));
    }
    s.windows = s.length / spec.window;
    if (s.windows == 0 && log != nullptr) {
      log->warn(fmt::format("{}: {} tokens, fewer than one window of {}; it contributes no samples", path, s.length,
                            spec.window));
    }
    tokens_ += s.length;
    cumulative_.push_back((cumulative_.empty() ? 0 : cumulative_.back()) + s.windows);
    shards_.push_back(std::move(s));
  }
  if (size() == 0) {
    throw sdk::Error(fmt::format("data in '{}' ({}) has {} tokens in {} file(s) but no shard holds one window of {} "
                                 "tokens (train.seq_len + 1); add data or lower train.seq_len",
                                 spec.path, spec.file_pattern, tokens_, shards_.size(), spec.window));
  }
}

at::Tensor MemmapDataset::window(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(fmt::format("memmap dataset: window index {} out of range [0, {})", index, size()));
  }
  // First shard whose cumulative count exceeds index.
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), index);
  const size_t k = static_cast<size_t>(it - cumulative_.begin());
  const int64_t local = index - (k == 0 ? 0 : cumulative_[k - 1]);
  const Shard& s = shards_[k];
  at::Tensor out = at::empty({spec_.window}, at::kLong);
  const unsigned char* src = s.tokens + static_cast<size_t>(local * spec_.window) * s.itemsize;
  if (s.itemsize == 2) {
    widen<uint16_t>(src, spec_.window, out.data_ptr<int64_t>());
  } else {
    widen<uint32_t>(src, spec_.window, out.data_ptr<int64_t>());
  }
  return out;
}

std::string MemmapDataset::describe() const {
  bool has16 = false, has32 = false;
  for (const auto& s : shards_) (s.itemsize == 2 ? has16 : has32) = true;
  const std::string dtype = has16 && has32 ? "uint16+uint32" : (has16 ? "uint16" : "uint32");
  const Shard* top = &shards_.front();
  for (const auto& s : shards_) top = s.max_id > top->max_id ? &s : top;
  return fmt::format(
      "memmap: {} file(s) matching '{}' in {}, {} tokens ({}), {} windows of {} tokens, largest token "
      "id {} (in {} at position {})",
      shards_.size(), spec_.file_pattern, spec_.path, tokens_, dtype, size(), spec_.window, top->max_id,
      top->file->path(), first_token_at_least(top->tokens, top->length, top->itemsize, top->max_id));
}

}  // namespace kforge::builtin::data
