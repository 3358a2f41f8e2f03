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
  /// len // spec.window windows; the tail is dropped and windows never cross shards. Each shard's ids
  /// are scanned once: a shard prepare-data's metadata.json lists must hold only ids below its vocab_size, and every
  /// shard only ids below spec.vocab_size (when > 0).
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
    int64_t max_id = -1;  ///< largest token id (-1: no tokens)
  };
  sdk::DatasetSpec spec_;
  std::vector<Shard> shards_;
  std::vector<int64_t> cumulative_;  ///< cumulative_[i] = windows in shards 0..i
  int64_t tokens_ = 0;
};

}  // namespace kforge::builtin::data
