// MemmapDataset: KempnerForge's MemoryMappedDataset: non-overlapping windows over mmapped shards.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/dataset.h"
#include "kforge/sdk/logger.h"
#include "shard_files.h"

namespace kforge::builtin::data {

/// Raw .bin token width; .npy shards carry theirs in the header.
enum class BinDtype { unset, uint16, uint32 };

/// Parses [data] bin_dtype ("", "uint16", "uint32"); throws ConfigError otherwise.
BinDtype parse_bin_dtype(const std::string& value);

class MemmapDataset final : public sdk::Dataset {
 public:
  /// Maps every shard of spec.path matching spec.file_pattern (sorted by name). Each shard gives
  /// len // spec.window windows; the tail is dropped and windows never cross shards. A .bin shard's token width is
  /// `bin_dtype` when set, else tokenized_info.dtype of tatm's metadata.yaml beside it, else inferred from its size as
  /// KempnerForge does (uint32 when a multiple of 4 bytes), logged on `log`. Each shard's ids are scanned once: a
  /// shard prepare-data's metadata.json lists must hold only ids below its vocab_size, one beside tatm's metadata.yaml
  /// only ids below tokenized_info.vocab_size, and every shard only ids below spec.vocab_size (when > 0).
  MemmapDataset(const sdk::DatasetSpec& spec, BinDtype bin_dtype, sdk::Logger* log = nullptr);

  int64_t size() const override { return cumulative_.empty() ? 0 : cumulative_.back(); }
  at::Tensor window(int64_t index) const override;
  std::string describe() const override;

 private:
  struct Shard {
    std::unique_ptr<MappedFile> file;
    const unsigned char* tokens = nullptr;
    size_t itemsize = 0;
    int64_t length = 0;
    int64_t windows = 0;
    int64_t max_id = -1;          ///< largest token id (-1: no tokens)
    bool inferred_width = false;  ///< a .bin shard whose width was inferred from its size
  };
  sdk::DatasetSpec spec_;
  std::vector<Shard> shards_;
  std::vector<int64_t> cumulative_;  ///< cumulative_[i] = windows in shards 0..i
  int64_t tokens_ = 0;
  std::string bin_widths_;  ///< the .bin shards' widths and their sources, "" when none
};

}  // namespace kforge::builtin::data
