// write_webdataset: a JSON Lines image-text manifest ({"image": "relative/path.jpg", "text": "...", ...} per
// line, image paths relative to the manifest) into uncompressed WebDataset tar shards for the image-text
// data path (kforge prepare-data --image-text).
#pragma once

#include <archive.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::data {

/// One tar shard being written (ustar; members are regular files, mode 0644, no time or owner) under
/// "<path>.tmp", renamed to its path by close().
class TarShardWriter {
 public:
  explicit TarShardWriter(std::filesystem::path path);
  void add(const std::string& name, std::string_view bytes);
  void close();

 private:
  std::filesystem::path path_;
  std::filesystem::path temporary_;
  std::unique_ptr<archive, int (*)(archive*)> archive_;
};

struct WebDatasetWriteOptions {
  std::filesystem::path manifest;
  std::filesystem::path output;
  int64_t samples_per_shard = 1000;
  bool skip_bad_lines = false;  ///< skip (and report) bad lines and unreadable images instead of failing
  bool overwrite = false;       ///< replace shards already in output
};

struct WebDatasetWriteResult {
  int64_t samples = 0;
  int64_t image_bytes = 0;
  std::vector<std::filesystem::path> shards;
  std::vector<std::string> skipped;  ///< one message per skipped line, naming manifest and line
  std::filesystem::path metadata;    ///< output/webdataset.json
};

/// Sample n (counting the samples written) becomes the members <n as 9 digits>.<image extension> (the image's
/// bytes, not re-encoded), .txt (the "text" string) and .json (the manifest line's object) of shard
/// n / samples_per_shard, shard-NNNNNN.tar; the headers carry no time or owner, so a manifest always gives the
/// same bytes. Errors name the manifest, the line and what is wrong.
WebDatasetWriteResult write_webdataset(const WebDatasetWriteOptions& options);

}  // namespace kforge::data
