// Token cross-entropy math (see token_cross_entropy.h).
#include "token_cross_entropy.h"

#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>

#include <algorithm>

#include "fused_cross_entropy.h"
#include "kforge/sdk/loss.h"

namespace kforge::builtin::losses {

at::Tensor summed_token_cross_entropy(const at::Tensor& logits, const at::Tensor& labels, int64_t chunk_tokens) {
  // The fused kernel holds no [tokens, vocab] intermediate, so chunking it would only add work.
  if (fused_cross_entropy_supports(logits)) return fused_cross_entropy_sum(logits, labels);
  const at::ScalarType sum_type = at::promote_types(logits.scalar_type(), at::kFloat);
  const int64_t tokens = logits.size(0);
  const auto piece = [&](int64_t start, int64_t length) {
    return at::cross_entropy_loss(logits.narrow(0, start, length), labels.narrow(0, start, length), {},
                                  at::Reduction::Sum, sdk::kIgnoreIndex)
        .to(sum_type);
  };
  if (chunk_tokens <= 0 || tokens <= chunk_tokens) return piece(0, tokens);
  at::Tensor total = piece(0, chunk_tokens);
  for (int64_t start = chunk_tokens; start < tokens; start += chunk_tokens) {
    total = total + piece(start, std::min(chunk_tokens, tokens - start));
  }
  return total;
}

at::Tensor mean_over_valid_tokens(const at::Tensor& sum, const at::Tensor& labels) {
  // A tensor count (no host sync); clamping to 1 keeps the all-ignored case at exactly 0 / 1 = 0.
  const at::Tensor valid = labels.ne(sdk::kIgnoreIndex).sum().clamp_min(1);
  return sum / valid;
}

}  // namespace kforge::builtin::losses
