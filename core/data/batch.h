// Batch: next-token training pairs gathered from dataset windows.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "kforge/sdk/dataset.h"

namespace kforge::data {

struct Batch {
  at::Tensor input_ids;  ///< int64 [B, S]: window[:-1]
  at::Tensor labels;     ///< int64 [B, S]: window[1:]
};

/// Stacks the windows `indices` of `dataset` (S = window - 1).
Batch make_batch(const sdk::Dataset& dataset, const std::vector<int64_t>& indices);

}  // namespace kforge::data
