// Documents of a packed row ([data] pack_sequences): where each token's document starts, which bounds
// the keys its query sees and restarts its RoPE position.
#pragma once

#include <ATen/core/Tensor.h>

namespace kforge::builtin::models {

/// doc_ids: int64 [B, S], non-decreasing along each row (sdk::Model::set_documents). Returns int64 [B, S],
/// contiguous: the position where each token's document starts, itself non-decreasing along each row,
/// so the query at t sees the keys starts[t] .. t. Throws sdk::Error for another dtype, rank or order.
at::Tensor document_starts(const at::Tensor& doc_ids);

}  // namespace kforge::builtin::models
