// kforge extract's output: one .npz of captured arrays, or a dataset's captures in .npz shards.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kforge/sdk/dataset.h"
#include "kforge/sdk/model.h"

namespace kforge::cli {

/// What to capture: the hook points, and each array's name and source (its point, "" for the forward's output).
struct ExtractSelection {
  std::vector<std::string> points, names, sources;
};

/// Writes tokens.npy (int64) and one <name>.npy per array (int64 or float32, capture()'s dtypes) into `out`,
/// through a .partial file renamed at the end. Throws sdk::Error naming `out`.
void write_extract_npz(const std::filesystem::path& out, const at::Tensor& tokens,
                       const std::vector<std::pair<std::string, at::Tensor>>& arrays);

/// The arrays of `selection` from one capture of `tokens` [B, S], in the order of its names.
std::vector<std::pair<std::string, at::Tensor>> extract_batch(sdk::Model& model, const at::Tensor& tokens,
                                                              const ExtractSelection& selection);

/// Captures windows 0.. of `data` (each without its last token, as a batch's input) in batches of `batch_size`,
/// at most `max_batches` (0: all), into `dir`/shard_00000.npz, ... of `shard_size` samples each (the last may
/// hold fewer). Returns the number of samples and of shards.
std::pair<int64_t, int64_t> write_extract_shards(sdk::Model& model, const sdk::Dataset& data, int64_t vocab_size,
                                                 const ExtractSelection& selection, int64_t batch_size,
                                                 int64_t max_batches, int64_t shard_size,
                                                 const std::filesystem::path& dir);

}  // namespace kforge::cli
