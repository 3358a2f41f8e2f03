// WebVidSource: KempnerForge's WebVid layout under [video] data_root: the captions in
// raw/<dataset_name>/data/{train|val}/partitions/*.csv (columns videoid and name, the files in name order, read up to
// max_samples rows), the clips at raw/videos/train/<id[:2]>/<id[:4]>/<id[:6]>/<id>.mp4 (validation:
// raw/videos/validation/<id>.mp4). The rows are read once; the videos are not looked at until decoded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "video/clip_source.h"

namespace kforge::video {

struct WebVidOptions {
  std::string data_root;     ///< [video] data_root
  std::string dataset_name;  ///< [video] dataset_name, e.g. "webvid-10M"
  std::string split;         ///< [video] split: "train" or "validation"
  int64_t max_samples = 0;   ///< [video] max_samples: > 0 stops after that many rows
  std::string prompt;        ///< [video] prompt, every sample's
  std::string root_key = "[video] data_root";  ///< the config key of data_root, for errors
};

/// The clip of `id` in `split` under `data_root`.
std::string webvid_video_path(const std::string& data_root, const std::string& split, const std::string& id);

class WebVidSource : public ClipSource {
 public:
  /// Reads the CSV partitions. Throws sdk::ConfigError naming [video] data_root and the path expected for a missing
  /// partitions directory or one without a .csv file, naming the file and line for a header without the videoid and
  /// name columns, a row without them or a videoid that is not an id (a path separator, a leading dot), naming [video] split, dataset_name or max_samples for a bad value, and for
  /// a dataset without rows.
  explicit WebVidSource(WebVidOptions options);

  int64_t size() const override { return static_cast<int64_t>(rows_.size()); }
  Clip clip(int64_t index) const override;
  std::string describe() const override;

 private:
  struct Row {
    std::string id;
    std::string caption;
    uint32_t file = 0;  ///< into files_
    int64_t line = 0;
  };
  /// Appends the rows of one partition; false once max_samples rows are read.
  bool read_partition(const std::string& file);

  WebVidOptions options_;
  std::string partitions_;
  std::vector<std::string> files_;  ///< the partitions read
  std::vector<Row> rows_;
};

}  // namespace kforge::video
