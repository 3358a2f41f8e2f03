// mark_documents: document ids from the EOS positions, and the cross-document labels ignored.
#include "data/documents.h"

#include <ATen/ATen.h>

namespace kforge::data {

void mark_documents(Batch& batch, int64_t eos_id) {
  const at::Tensor ends = batch.input_ids.eq(eos_id);  // an EOS input ends its document after itself
  batch.doc_ids = (ends.cumsum(1) - ends.to(at::kLong)).contiguous();
  batch.labels = batch.labels.masked_fill(ends, kIgnoredLabel);
}

}  // namespace kforge::data
