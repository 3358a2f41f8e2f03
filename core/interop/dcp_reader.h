// A torch.distributed.checkpoint directory's items, each tensor whole again from its chunks.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/mapped_file.h"
#include "interop/dcp_metadata.h"

namespace kforge::interop {

class DcpReader {
 public:
  /// Reads `dirs`' `.metadata` files (one directory, or a pipeline run's pp* stages, whose tensors are disjoint; of a
  /// pickled value in several stages, such as each stage's optimizer param_groups, the first is kept). Throws
  /// sdk::Error naming the file; a tensor in two stages is refused naming it.
  explicit DcpReader(const std::vector<std::filesystem::path>& dirs);

  /// Every item, by flattened key ("model.<fqn>", "optimizer.state.<fqn>.exp_avg", ...).
  const std::map<std::string, DcpItem>& items() const { return items_; }

  /// The tensor `key` names, whole: each chunk read from its .distcp file (torch.save bytes at its offset) and
  /// placed at its offsets. Throws sdk::Error naming the file and key when a chunk is missing, truncated, of another
  /// shape or dtype than the metadata says, or the chunks do not cover the tensor.
  at::Tensor tensor(const std::string& key) const;

 private:
  std::map<std::string, DcpItem> items_;
  std::map<std::string, std::filesystem::path> dir_of_;  ///< key -> the directory whose .distcp files hold it
  mutable std::map<std::filesystem::path, std::unique_ptr<checkpoint::MappedFile>> files_;
};

/// at::ScalarType of a dtype as torch names it ("float32", "bfloat16", ...); throws sdk::Error naming `what`.
at::ScalarType dcp_dtype(const std::string& name, const std::string& what);

}  // namespace kforge::interop
