// WebDatasetSource: uncompressed WebDataset tar shards (*.tar). A sample is the run of consecutive members that
// share a key (the member path up to the first dot of its file name): one image (.jpg .jpeg .png .webp) and a
// caption (.txt, else the "caption" or "text" string of .json; a .json "prompt" string is the prompt). The
// index (shard, header offset, members) is built once by reading the shards in name order, so sample i is the
// same on every rank and after a resume; a sample is then read from its offset with libarchive.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "image_text_io/image_decode.h"
#include "image_text_io/image_text_source.h"
#include "image_text_io/warn.h"

namespace kforge::image_text {

/// The shards of `path`: the *.tar files of a directory in name order, or the one file.
std::vector<std::filesystem::path> find_shards(const std::filesystem::path& path);

struct WebDatasetIndexStats {
  int64_t shards = 0;
  int64_t samples = 0;
  int64_t incomplete_samples = 0;  ///< keys without an image or without a caption (warned, not indexed)
  int64_t truncated_shards = 0;    ///< shards whose tail was cut or damaged (the samples before it are kept)
};

class WebDatasetSource : public ImageTextSource {
 public:
  /// Indexes `shards` (throws sdk::Error when one cannot be opened or is not a tar archive); a truncated shard
  /// and incomplete samples are warned about, naming the shard and key, and counted.
  WebDatasetSource(std::vector<std::filesystem::path> shards, Warn warn = stderr_warn(),
                   int64_t max_image_bytes = kDefaultMaxImageBytes);

  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  /// Throws SampleError for a sample that cannot be read, or whose image or caption member is larger than
  /// max_image_bytes.
  RawSample load(int64_t index) const override;
  const WebDatasetIndexStats& stats() const { return stats_; }
  /// The key of sample `index`, without reading it.
  const std::string& key(int64_t index) const { return entries_.at(index).key; }

 private:
  struct Entry {
    uint32_t shard = 0;
    int32_t members = 0;  ///< consecutive members from `offset` that belong to the sample
    int64_t offset = 0;   ///< byte offset of the first member's header in the shard
    std::string key;
  };
  void index_shard(uint32_t shard);

  std::vector<std::filesystem::path> shards_;
  std::vector<Entry> entries_;
  WebDatasetIndexStats stats_;
  Warn warn_;
  int64_t max_image_bytes_;
};

}  // namespace kforge::image_text
