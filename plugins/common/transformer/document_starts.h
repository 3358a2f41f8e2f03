// Documents of a packed row ([data] pack_sequences): where each token's document starts, which bounds
// the keys its query sees and restarts its RoPE position.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace kforge::builtin::models {

/// doc_ids: int64 [B, S], non-decreasing along each row (sdk::Model::set_documents). Returns int64 [B, S],
/// contiguous: the position where each token's document starts, itself non-decreasing along each row,
/// so the query at t sees the keys starts[t] .. t. Throws sdk::Error for another dtype, rank or order.
at::Tensor document_starts(const at::Tensor& doc_ids);

/// The document starts of rows of `positions` prefix positions (e.g. a clip's image tokens) then `seq` more, whose
/// first prefix_padding[b] positions of row b are padding: the padding is a document of its own from 0, the rest of
/// the row one from prefix_padding[b] (so the real positions see neither the padding nor its RoPE offset, and a row of
/// padding only still attends to itself). Returns int64 [batch, positions + seq], contiguous. Throws sdk::Error, named
/// by `who` ("transformer"), unless prefix_padding is int64 [batch] within [0, positions].
at::Tensor prefix_document_starts(const at::Tensor& prefix_padding, int64_t batch, int64_t positions, int64_t seq,
                                  const std::string& who);

/// Which keys each query sees: bool [seq, keys] (query i at position keys - seq + i sees the keys up to it), or with
/// doc_starts (int64 [B, seq]) [B, 1, seq, keys], also from its document's start on.
at::Tensor visible_keys(int64_t seq, int64_t keys, const at::Tensor& doc_starts, const at::TensorOptions& options);

}  // namespace kforge::builtin::models
