// The cross-entropy losses (see cross_entropy.h).
#include "cross_entropy.h"

#include <ATen/ATen.h>

#include <sstream>

#include "kforge/sdk/error.h"
#include "token_cross_entropy.h"
#include "vocab_parallel_cross_entropy.h"
#include "z_loss.h"

namespace kforge::builtin::losses {
namespace {

constexpr int64_t kDefaultChunkTokens = 4096;

void check_shapes(const at::Tensor& logits, const at::Tensor& labels) {
  if (logits.dim() >= 2 && labels.numel() * logits.size(-1) == logits.numel()) return;
  std::ostringstream message;
  message << "cross_entropy: logits " << logits.sizes() << " do not match labels " << labels.sizes()
          << " (want logits [..., vocab] with one label per row)";
  throw sdk::Error(message.str());
}

}  // namespace

at::Tensor CrossEntropy::compute(const at::Tensor& logits, const at::Tensor& labels) {
  check_shapes(logits, labels);
  const at::Tensor flat_logits = logits.reshape({-1, logits.size(-1)});
  const at::Tensor flat_labels = labels.reshape({-1}).to(at::kLong);
  if (options_.tensor_parallel != nullptr) {
    const VocabParallelSums sums =
        vocab_parallel_cross_entropy(flat_logits, flat_labels, *options_.tensor_parallel, options_.chunk_tokens);
    at::Tensor loss = mean_over_valid_tokens(sums.cross_entropy, flat_labels);
    if (options_.z_loss_weight > 0) loss = loss + sums.logsumexp.pow(2).mean() * options_.z_loss_weight;
    return loss;
  }
  at::Tensor loss = mean_over_valid_tokens(
      summed_token_cross_entropy(flat_logits, flat_labels, options_.chunk_tokens), flat_labels);
  if (options_.z_loss_weight > 0) loss = loss + z_loss(flat_logits, options_.z_loss_weight);
  return loss;
}

std::unique_ptr<sdk::Loss> make_cross_entropy(const sdk::BuildContext& ctx) {
  return std::make_unique<CrossEntropy>(
      CrossEntropyOptions{0, ctx.section.get_float("z_loss_weight"), ctx.tensor_parallel});
}

std::unique_ptr<sdk::Loss> make_chunked_cross_entropy(const sdk::BuildContext& ctx) {
  const int64_t chunk = ctx.section.get_int("ce_chunk_size");
  return std::make_unique<CrossEntropy>(CrossEntropyOptions{
      chunk > 0 ? chunk : kDefaultChunkTokens, ctx.section.get_float("z_loss_weight"), ctx.tensor_parallel});
}

}  // namespace kforge::builtin::losses
