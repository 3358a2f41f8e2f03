// make_batch: stack windows, split into inputs w[:-1] and labels w[1:].
#include "data/batch.h"

#include <ATen/ATen.h>

#include "data/documents.h"
#include "data/token_ids.h"
#include "kforge/sdk/error.h"

namespace kforge::data {

Batch make_batch(const sdk::Dataset& dataset, const std::vector<int64_t>& indices, int64_t vocab_size, int64_t eos_id) {
  if (indices.empty()) throw sdk::Error("make_batch: no sample indices");
  std::vector<at::Tensor> rows;
  rows.reserve(indices.size());
  for (int64_t i : indices) rows.push_back(dataset.window(i));
  const at::Tensor windows = at::stack(rows);  // [B, W]
  if (vocab_size > 0) {
    if (const auto past = id_past_vocab(windows, indices, vocab_size, dataset)) throw sdk::Error(*past);
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
