// Batch: next-token training pairs gathered from dataset windows.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "kforge/sdk/dataset.h"

namespace kforge::data {

struct Batch {
  at::Tensor input_ids;  ///< int64 [B, S]: window[:-1]
  at::Tensor labels;     ///< int64 [B, S]: window[1:]
  at::Tensor sources;    ///< int64 [B] mixture source of each row (undefined without a mixture, and on steps
                         ///< whose metrics are not logged)
  at::Tensor doc_ids;    ///< int64 [B, S] document of each input token (undefined unless packing)
  at::Tensor pixel_values;  ///< float32 [B, 3, H, W]: each row's image, or [B, F, 3, H, W] its clip (vision-language
                            ///< runs; else undefined)
  at::Tensor frame_mask;    ///< bool [B, F]: each clip's real frames, first (video runs; else undefined)
  at::Tensor frame_times;   ///< float32 [B, F]: each frame's time in its clip in seconds (video runs; else undefined)
};

/// Stacks the windows `indices` of `dataset` (S = window - 1). With `vocab_size` > 0, throws
/// sdk::Error for a token id >= vocab_size (which the model's embedding would refuse as "index out
/// of range in self"), naming the window, the id, its position, the vocab size and the data (the
/// memmap dataset's describe() names the file holding its largest id and where).
/// With `eos_id` >= 0 ([data] pack_sequences), splits the windows into documents (data/documents.h).
Batch make_batch(const sdk::Dataset& dataset, const std::vector<int64_t>& indices, int64_t vocab_size = 0,
                 int64_t eos_id = -1);

/// `batch` with every tensor on `device` (itself on the CPU). To a CUDA device the copies go from pinned host memory
/// without blocking, so those of a step's micro-batches queue ahead of its compute on the stream.
Batch on_device(Batch batch, const c10::Device& device);

}  // namespace kforge::data
