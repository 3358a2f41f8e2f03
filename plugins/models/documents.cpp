// document_starts: each token's document start from the row's document ids.
#include "documents.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <sstream>

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

}  // namespace kforge::builtin::models
