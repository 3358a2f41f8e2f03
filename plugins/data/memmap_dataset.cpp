// MemmapDataset: shard mapping (a .bin shard's width from bin_dtype, tatm's metadata.yaml or its size), window
// index -> (shard, offset) by binary search, uint16/32 -> int64.
#include "memmap_dataset.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "kforge/sdk/error.h"
#include "npy_header.h"
#include "prepared_vocab.h"
#include "tatm_metadata.h"
#include "token_scan.h"

namespace kforge::builtin::data {
namespace {

template <class T>
void widen(const unsigned char* src, int64_t n, int64_t* dst) {
  const T* p = reinterpret_cast<const T*>(src);  // little-endian host, as the formats are
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int64_t>(p[i]);
}

std::string dtype_name(size_t itemsize) { return itemsize == 2 ? "uint16" : "uint32"; }

size_t dtype_size(BinDtype dtype) { return dtype == BinDtype::uint16 ? 2 : 4; }

// A .bin shard's token width and where it comes from (for the log, describe() and messages).
struct BinWidth {
  size_t itemsize;
  std::string source;
  bool inferred;
};

// [data] bin_dtype when set (a contradiction with tatm's metadata.yaml is an error), else the metadata's
// tokenized_info.dtype, else KempnerForge's guess from the file size: uint32 when it is a multiple of 4 bytes.
BinWidth bin_width(const std::string& path, size_t bytes, BinDtype configured,
                   const std::optional<TatmMetadata>& meta) {
  std::optional<BinDtype> recorded;
  if (meta && meta->dtype) {
    if (*meta->dtype != "uint16" && *meta->dtype != "uint32") {
      throw sdk::ConfigError(fmt::format(
          "{}: tokenized_info.dtype = \"{}\" (the width of shard {}): the memmap dataset reads uint16 or uint32 tokens",
          meta->file, *meta->dtype, path));
    }
    recorded = parse_bin_dtype(*meta->dtype);
  }
  if (configured != BinDtype::unset) {
    if (recorded && *recorded != configured) {
      throw sdk::ConfigError(fmt::format(
          "{}: [data] bin_dtype = \"{}\" contradicts tokenized_info.dtype = \"{}\" in {}; remove bin_dtype (the "
          "metadata records the width tatm wrote) or correct the one that is wrong",
          path, dtype_name(dtype_size(configured)), *meta->dtype, meta->file));
    }
    return {dtype_size(configured), "[data] bin_dtype", false};
  }
  if (recorded) return {dtype_size(*recorded), "tokenized_info.dtype in " + meta->file, false};
  return {
      bytes % 4 == 0 ? size_t{4} : size_t{2},
      fmt::format("inferred from the file size as KempnerForge does (uint32 when a multiple of 4 bytes): no [data] "
                  "bin_dtype{}",
                  meta ? ", no tokenized_info.dtype in " + meta->file : ", no tatm metadata.yaml beside the shards"),
      true};
}

// The vocabulary a shard's ids were recorded against: prepare-data's metadata.json (when it lists the shard), else
// tatm's tokenized_info.vocab_size.
struct RecordedVocab {
  int64_t size;
  std::string where, remedy;
};

std::optional<RecordedVocab> recorded_vocab(const std::string& path, const std::optional<PreparedVocab>& prepared,
                                            const std::optional<TatmMetadata>& tatm) {
  if (prepared && prepared->shards.count(normalised_shard_path(path)) != 0) {
    return RecordedVocab{prepared->vocab_size, "vocab_size in " + prepared->metadata, "re-run kforge prepare-data"};
  }
  if (tatm && tatm->vocab_size) {
    return RecordedVocab{*tatm->vocab_size, "tokenized_info.vocab_size in " + tatm->file,
                         "check [data] bin_dtype, or re-tokenise it"};
  }
  return std::nullopt;
}

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
  std::map<std::filesystem::path, std::optional<TatmMetadata>> tatm;  // by shard directory
  std::set<std::string> widths;                                        // "uint32 (source)" of the .bin shards
  for (const std::string& path : paths) {
    const std::string ext = std::filesystem::path(path).extension().string();
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (tatm.count(dir) == 0) tatm[dir] = find_tatm_metadata(dir);
    const std::optional<TatmMetadata>& meta = tatm[dir];
    Shard s;
    if (ext == ".npy") {
      s.file = std::make_unique<MappedFile>(path);
      const NpyInfo info = parse_npy_header(path, s.file->data(), s.file->size());
      s.tokens = s.file->data() + info.data_offset;
      s.itemsize = info.itemsize;
      s.length = info.length;
    } else if (ext == ".bin") {
      s.file = std::make_unique<MappedFile>(path);
      const BinWidth width = bin_width(path, s.file->size(), bin_dtype, meta);
      s.itemsize = width.itemsize;
      s.inferred_width = width.inferred;
      widths.insert(fmt::format("{} ({})", dtype_name(s.itemsize), width.source));
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
    const std::string inferred =
        s.inferred_width ? fmt::format(" ({} was inferred from the file size: set [data] bin_dtype if the shards hold "
                                       "{} tokens)",
                                       dtype_name(s.itemsize), dtype_name(6 - s.itemsize))
                         : "";
    if (const auto recorded = recorded_vocab(path, vocab, meta); recorded && s.max_id >= recorded->size) {
      const int64_t at = first_token_at_least(s.tokens, s.length, s.itemsize, recorded->size);
      throw sdk::Error(
          fmt::format("{}: token id {} at position {} is outside the vocabulary of {} ids ({}); the shard is corrupt "
                      "or was written with another tokenizer: {}{}",
                      path, token_at(s.tokens, at, s.itemsize), at, recorded->size, recorded->where, recorded->remedy,
                      inferred));
    }
    if (spec.vocab_size > 0 && s.max_id >= spec.vocab_size) {
      const int64_t at = first_token_at_least(s.tokens, s.length, s.itemsize, spec.vocab_size);
      throw sdk::Error(fmt::format("{}: token id {} at position {} is >= [model] vocab_size {}; set vocab_size to the "
                                   "tokenizer's vocabulary (prepare-data's metadata.json vocab_size) or re-tokenise "
                                   "the data{}",
                                   path, token_at(s.tokens, at, s.itemsize), at, spec.vocab_size, inferred));
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
  for (const std::string& w : widths) bin_widths_ += (bin_widths_.empty() ? "" : "; ") + w;
  if (!bin_widths_.empty() && log != nullptr) log->info(fmt::format("{}: .bin token width {}", spec.path, bin_widths_));
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
      shards_.size(), spec_.file_pattern, spec_.path, tokens_,
      bin_widths_.empty() ? dtype : dtype + "; .bin: " + bin_widths_, size(), spec_.window, top->max_id,
      top->file->path(), first_token_at_least(top->tokens, top->length, top->itemsize, top->max_id));
}

}  // namespace kforge::builtin::data
