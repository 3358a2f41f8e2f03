// document_starts: each token's document start from the row's document ids; prefix_document_starts: from a prefix's
// padding.
#include "document_starts.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <sstream>
#include <string>

namespace kforge::builtin::models {

at::Tensor document_starts(const at::Tensor& doc_ids) {
  if (doc_ids.dim() != 2 || doc_ids.scalar_type() != at::kLong || doc_ids.size(1) == 0) {
    std::ostringstream message;
    message << "transformer: document ids must be int64 [batch, seq], got " << doc_ids.scalar_type() << " "
            << doc_ids.sizes();
    throw sdk::Error(message.str());
  }
  const int64_t seq = doc_ids.size(1);
  const at::Tensor step = doc_ids.narrow(1, 1, seq - 1) - doc_ids.narrow(1, 0, seq - 1);
  if (step.lt(0).any().item<bool>()) {
    const at::Tensor where = step.lt(0).nonzero()[0];
    throw sdk::Error("transformer: document ids must not decrease along a row (packed documents are contiguous); row " +
                     std::to_string(where[0].item<int64_t>()) + " goes down after position " +
                     std::to_string(where[1].item<int64_t>()));
  }
  // A position where the id changes starts a document; the start of t is the latest such position <= t.
  const at::Tensor first = at::cat({at::ones({doc_ids.size(0), 1}, step.options().dtype(at::kBool)), step.ne(0)}, 1);
  return std::get<0>(at::cummax(first * at::arange(seq, doc_ids.options()), 1)).contiguous();
}

at::Tensor prefix_document_starts(const at::Tensor& prefix_padding, int64_t batch, int64_t positions, int64_t seq,
                                  const std::string& who) {
  if (prefix_padding.scalar_type() != at::kLong || prefix_padding.sizes() != at::IntArrayRef{batch} ||
      prefix_padding.lt(0).any().item<bool>() || prefix_padding.gt(positions).any().item<bool>()) {
    throw sdk::Error(who + ": the prefix padding must be int64 [" + std::to_string(batch) + "] within [0, " +
                     std::to_string(positions) + "], got " + std::string(c10::toString(prefix_padding.scalar_type())) +
                     " " + c10::str(prefix_padding.sizes()));
  }
  // Each row's document starts: 0 over its padding, then the padding's length.
  const at::Tensor padding = prefix_padding.unsqueeze(1);
  const at::Tensor position = at::arange(positions + seq, prefix_padding.options()).unsqueeze(0);
  return at::where(position.lt(padding), at::zeros_like(padding), padding).contiguous();
}

at::Tensor visible_keys(int64_t seq, int64_t keys, const at::Tensor& doc_starts, const at::TensorOptions& options) {
  at::Tensor visible = at::ones({seq, keys}, options.dtype(at::kBool)).tril(keys - seq);
  if (!doc_starts.defined()) return visible;
  return visible.logical_and(at::arange(keys, doc_starts.options()).ge(doc_starts.unsqueeze(-1))).unsqueeze(1);
}

}  // namespace kforge::builtin::models
