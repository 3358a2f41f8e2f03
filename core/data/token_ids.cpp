// Token ids against [model] vocab_size: one comparison over stacked windows, located only when it fails.
#include "data/token_ids.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace kforge::data {

std::optional<std::string> id_past_vocab(const at::Tensor& windows, const std::vector<int64_t>& indices,
                                         int64_t vocab_size, const sdk::Dataset& dataset) {
  const at::Tensor past = windows.ge(vocab_size);
  if (!past.any().item<bool>()) return std::nullopt;
  const at::Tensor first = past.nonzero()[0];  // (row, column), row-major first
  const int64_t row = first[0].item<int64_t>(), col = first[1].item<int64_t>();
  return fmt::format(
      "sample window {}: token id {} at position {} of the window is >= [model] vocab_size {}; set vocab_size to the "
      "tokenizer's vocabulary (prepare-data's metadata.json vocab_size) or re-tokenise the data ({})",
      indices[static_cast<size_t>(row)], windows[row][col].item<int64_t>(), col, vocab_size, dataset.describe());
}

}  // namespace kforge::data
