// Dataset: a map-style source of fixed-length token windows; the host owns sampling order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace kforge::sdk {

struct DatasetSpec {
  std::string path;          ///< directory of shards
  std::string file_pattern;  ///< glob over file names, e.g. "*.npy"
  int64_t window = 0;        ///< tokens per sample (train.seq_len + 1)
  /// [model] vocab_size: a dataset refuses, when it opens, data holding an id >= vocab_size (throws naming the file
  /// and the first such id's position), so that no window drawn later fails in the embedding; 0: no check.
  int64_t vocab_size = 0;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  /// Number of windows.
  virtual int64_t size() const = 0;
  /// int64 [window] tokens of window `index` (0 <= index < size()).
  virtual at::Tensor window(int64_t index) const = 0;
  /// One line for the log: files, tokens, dtype.
  virtual std::string describe() const = 0;
};

}  // namespace kforge::sdk
