// kforge extract's output: .npz writing (int64 and float32 arrays) and a dataset's batched capture into shards.
#include "cli/extract_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "data/batch.h"
#include "data/npz_writer.h"
#include "generate/capture.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {

namespace {

/// Adds `value` (int64 or float32, contiguous) to `npz` as `name` with its dtype.
void add_array(data::NpzWriter& npz, const std::string& name, const at::Tensor& value) {
  const bool integer = value.scalar_type() == at::kLong;
  if (!integer && value.scalar_type() != at::kFloat) {
    throw sdk::Error(fmt::format("array '{}' is {}, not int64 or float32", name, c10::toString(value.scalar_type())));
  }
  npz.add(name, integer ? "<i8" : "<f4", integer ? sizeof(int64_t) : sizeof(float), value.sizes().vec(),
          value.data_ptr(), value.nbytes());
}

}  // namespace

void write_extract_npz(const std::filesystem::path& out, const at::Tensor& tokens,
                       const std::vector<std::pair<std::string, at::Tensor>>& arrays) {
  const std::filesystem::path partial = out.string() + ".partial";
  try {
    data::NpzWriter npz(partial);
    add_array(npz, "tokens", tokens);
    for (const auto& [name, v] : arrays) add_array(npz, name, v);
    npz.close();
    std::filesystem::rename(partial, out);
  } catch (const std::exception& e) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw sdk::Error(fmt::format("cannot write {}: {}", out.string(), e.what()));
  }
}

std::vector<std::pair<std::string, at::Tensor>> extract_batch(sdk::Model& model, const at::Tensor& tokens,
                                                              const ExtractSelection& selection) {
  at::Tensor logits;
  const std::map<std::string, at::Tensor> values = generate::capture(model, tokens, selection.points, &logits);
  std::vector<std::pair<std::string, at::Tensor>> arrays;
  for (size_t i = 0; i < selection.names.size(); ++i) {
    arrays.emplace_back(selection.names[i], selection.sources[i].empty() ? logits : values.at(selection.sources[i]));
  }
  return arrays;
}

std::pair<int64_t, int64_t> write_extract_shards(sdk::Model& model, const sdk::Dataset& data, int64_t vocab_size,
                                                 const ExtractSelection& selection, int64_t batch_size,
                                                 int64_t max_batches, int64_t shard_size,
                                                 const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int64_t windows = data.size();
  if (max_batches > 0) windows = std::min(windows, max_batches * batch_size);
  std::vector<at::Tensor> tokens;                                 // the pending samples' rows, batch by batch
  std::vector<std::vector<at::Tensor>> arrays(selection.names.size());
  int64_t pending = 0, shards = 0;
  const auto flush = [&](int64_t rows) {  // writes the first `rows` pending samples as the next shard
    const at::Tensor all_tokens = at::cat(tokens);
    std::vector<std::pair<std::string, at::Tensor>> shard;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const at::Tensor all = at::cat(arrays[i]);
      shard.emplace_back(selection.names[i], all.slice(0, 0, rows).contiguous());
      arrays[i] = {all.slice(0, rows)};
    }
    write_extract_npz(dir / fmt::format("shard_{:05d}.npz", shards++), all_tokens.slice(0, 0, rows).contiguous(),
                      shard);
    tokens = {all_tokens.slice(0, rows)};
    pending -= rows;
  };
  for (int64_t first = 0; first < windows; first += batch_size) {
    std::vector<int64_t> indices;
    for (int64_t i = first; i < std::min(windows, first + batch_size); ++i) indices.push_back(i);
    const at::Tensor input = data::make_batch(data, indices, vocab_size).input_ids;
    const auto batch = extract_batch(model, input, selection);
    tokens.push_back(input);
    for (size_t i = 0; i < batch.size(); ++i) arrays[i].push_back(batch[i].second);
    pending += input.size(0);
    while (pending >= shard_size) flush(shard_size);
  }
  if (pending > 0) flush(pending);
  return {windows, shards};
}

}  // namespace kforge::cli
