// Token ids against [model] vocab_size: the first id at or past it in a batch of windows.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kforge/sdk/dataset.h"

namespace kforge::data {

/// The first id >= vocab_size (row-major) in `windows` (int64 [B, W], row b being window indices[b] of
/// `dataset`), described for an error message: the window, the id, its position, the vocab size and the data (the
/// memmap dataset's describe() names the file holding its largest id and where); nullopt when there is none.
std::optional<std::string> id_past_vocab(const at::Tensor& windows, const std::vector<int64_t>& indices,
                                         int64_t vocab_size, const sdk::Dataset& dataset);

}  // namespace kforge::data
