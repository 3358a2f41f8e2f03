// Vocabulary-parallel cross-entropy (see vocab_parallel_cross_entropy.h).
#include "vocab_parallel_cross_entropy.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "kforge/sdk/loss.h"

namespace kforge::builtin::losses {
namespace {

VocabParallelSums chunk_sums(const at::Tensor& logits, const at::Tensor& labels, const sdk::TensorParallel& tp) {
  const at::Tensor wide = logits.to(at::promote_types(logits.scalar_type(), at::kFloat));
  const at::Tensor shift = tp.max(std::get<0>(wide.detach().max(1)));  // [rows]: every column's max
  const at::Tensor lse = tp.sum((wide - shift.unsqueeze(1)).exp().sum(1)).log() + shift;
  const int64_t width = wide.size(1), first = width * tp.rank();
  const at::Tensor here = labels.ge(first).logical_and(labels.lt(first + width));
  const at::Tensor column = (labels - first).clamp(0, width - 1).unsqueeze(1);
  const at::Tensor label_logit = tp.sum(wide.gather(1, column).squeeze(1) * here);
  return {((lse - label_logit) * labels.ne(sdk::kIgnoreIndex)).sum(), lse};
}

}  // namespace

VocabParallelSums vocab_parallel_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                               const sdk::TensorParallel& tp, int64_t chunk_tokens) {
  const int64_t tokens = logits.size(0);
  const int64_t step = chunk_tokens > 0 ? chunk_tokens : std::max<int64_t>(tokens, 1);
  at::Tensor total;
  std::vector<at::Tensor> lse;
  int64_t start = 0;
  do {  // once for no tokens too
    const int64_t rows = std::min(step, tokens - start);
    VocabParallelSums piece = chunk_sums(logits.narrow(0, start, rows), labels.narrow(0, start, rows), tp);
    total = total.defined() ? total + piece.cross_entropy : piece.cross_entropy;
    lse.push_back(piece.logsumexp);
    start += step;
  } while (start < tokens);
  return {total, lse.size() == 1 ? lse.front() : at::cat(lse)};
}

}  // namespace kforge::builtin::losses
