// Documents in packed windows ([data] pack_sequences): each input token's document and the labels
// that would predict across a document boundary.
#pragma once

#include <cstdint>

#include "data/batch.h"

namespace kforge::data {

/// Label of a position the loss ignores (the loss plugins' ignore_index).
inline constexpr int64_t kIgnoredLabel = -100;

/// Splits each window of `batch` into documents at `eos_id` (KempnerForge's rule): the document id starts at 0
/// in every row and increments after each EOS, so an EOS belongs to the document it ends. Sets batch.doc_ids
/// (int64 [B, S], of each input token) and sets labels[t] to kIgnoredLabel where input t and label t lie in
/// different documents, i.e. where input t is an EOS: nothing learns to predict a document's first token from
/// the previous document.
void mark_documents(Batch& batch, int64_t eos_id);

}  // namespace kforge::data
