// Context parallelism's batches ([distributed] cp > 1): each rank keeps its positions of every sequence, in the
// load-balanced causal layout, and a loss over them becomes the whole sequences' again.
#pragma once

#include <cstdint>

#include "data/batch.h"
#include "dist/group.h"

namespace kforge::train {

/// `batch` with input_ids, labels and doc_ids cut to the positions sdk::context_positions(rank, size, S) (sources, one
/// per row, stay). Throws sdk::Error for a batch with images, or S not a multiple of 2 * size.
data::Batch context_shard(data::Batch batch, int rank, int size);

/// The mean loss of the whole sequences from every cp rank's mean `loss` over its `tokens` trained tokens (collective
/// over `cp`); `loss` itself for a group of one.
double context_mean(const dist::Group& cp, double loss, int64_t tokens);

}  // namespace kforge::train
