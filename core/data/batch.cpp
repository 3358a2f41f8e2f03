// make_batch: stack windows, split into inputs w[:-1] and labels w[1:].
#include "data/batch.h"

#include <ATen/ATen.h>

#include "kforge/sdk/error.h"

namespace kforge::data {

Batch make_batch(const sdk::Dataset& dataset, const std::vector<int64_t>& indices) {
  if (indices.empty()) throw sdk::Error("make_batch: no sample indices");
  std::vector<at::Tensor> rows;
  rows.reserve(indices.size());
  for (int64_t i : indices) rows.push_back(dataset.window(i));
  const at::Tensor windows = at::stack(rows);  // [B, W]
  const int64_t w = windows.size(1);
  return Batch{windows.narrow(1, 0, w - 1).contiguous(), windows.narrow(1, 1, w - 1).contiguous()};
}

}  // namespace kforge::data
