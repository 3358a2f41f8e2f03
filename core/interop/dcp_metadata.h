// The `.metadata` file of a torch.distributed.checkpoint (DCP) directory: which items it holds and where their bytes lie.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::interop {

/// One stored piece of an item: a tensor chunk (FSDP/TP shards are several) or an item's bytes, written by
/// FileSystemWriter as torch.save bytes at [offset, offset + length) of `file` (a `__<rank>_<n>.distcp`).
struct DcpChunk {
  std::vector<int64_t> offsets;  ///< of the chunk's first element in the whole tensor (empty for bytes)
  std::vector<int64_t> sizes;    ///< the chunk's shape (empty for bytes)
  std::string file;
  uint64_t offset = 0, length = 0;
};

/// An item of the flattened state dict ("model.layers.0.attention.q_proj.weight", "optimizer.state.<fqn>.exp_avg",
/// "optimizer.param_groups.0.lr", ...): a tensor (dtype as torch names it, "float32", and its whole shape) or a
/// pickled Python value (bytes).
struct DcpItem {
  bool tensor = false;
  std::string dtype;
  std::vector<int64_t> size;
  std::vector<DcpChunk> chunks;
};

/// Parses `.metadata` (PyTorch's pickle of torch.distributed.checkpoint.metadata.Metadata, as torch 2.x writes it,
/// or torch 1.13's torch.distributed._shard.checkpoint classes) with the restricted pickle reader: only the DCP
/// metadata classes, torch.Size, torch's dtypes and its layout lookup are accepted. Checks that every tensor chunk lies
/// inside its tensor and has storage, and refuses storage written through a stream transform (compression).
/// Throws sdk::Error naming `origin` and the item at fault.
std::map<std::string, DcpItem> parse_dcp_metadata(std::string_view bytes, const std::string& origin);

}  // namespace kforge::interop
