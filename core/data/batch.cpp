// make_batch: stack windows, split into inputs w[:-1] and labels w[1:].
#include "data/batch.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "data/documents.h"
#include "kforge/sdk/error.h"

namespace kforge::data {

Batch make_batch(const sdk::Dataset& dataset, const std::vector<int64_t>& indices, int64_t vocab_size, int64_t eos_id) {
  if (indices.empty()) throw sdk::Error("make_batch: no sample indices");
  std::vector<at::Tensor> rows;
  rows.reserve(indices.size());
  for (int64_t i : indices) rows.push_back(dataset.window(i));
  const at::Tensor windows = at::stack(rows);  // [B, W]
  if (vocab_size > 0 && windows.ge(vocab_size).any().item<bool>()) {
    const at::Tensor first = windows.ge(vocab_size).nonzero()[0];  // (row, column), row-major first
    const int64_t row = first[0].item<int64_t>(), col = first[1].item<int64_t>();
    throw sdk::Error(fmt::format(
        "sample window {}: token id {} at position {} of the window is >= [model] "
        "vocab_size {}; set vocab_size to the tokenizer's vocabulary (prepare-data's "
        "metadata.json vocab_size) or re-tokenise the data ({})",
        indices[static_cast<size_t>(row)], windows[row][col].item<int64_t>(), col, vocab_size, dataset.describe()));
  }
  const int64_t w = windows.size(1);
  Batch batch{windows.narrow(1, 0, w - 1).contiguous(), windows.narrow(1, 1, w - 1).contiguous()};
  if (eos_id >= 0) mark_documents(batch, eos_id);
  return batch;
}

Batch on_device(Batch batch, const c10::Device& device) {
  if (device.is_cpu()) return batch;
  for (at::Tensor* t : {&batch.input_ids, &batch.labels, &batch.sources, &batch.doc_ids, &batch.pixel_values,
                        &batch.frame_mask, &batch.frame_times}) {
    if (!t->defined()) continue;
    *t = device.is_cuda() ? t->pin_memory().to(device, /*non_blocking=*/true) : t->to(device);
  }
  return batch;
}

}  // namespace kforge::data
