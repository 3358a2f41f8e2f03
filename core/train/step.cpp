// The standard text step.
#include "train/step.h"

#include <ATen/ATen.h>

#include "feed/mixture_feed.h"
#include "parallel/precision.h"
#include "parallel/token_weights.h"
#include "profiling/user_scope.h"
#include "train/trainer.h"

namespace kforge::train {

StepResult standard_step(Trainer& trainer, const std::vector<data::Batch>& micro_batches) {
  const double n = static_cast<double>(micro_batches.size());
  std::vector<int64_t> counts;
  for (const data::Batch& batch : micro_batches) counts.push_back(parallel::trained_tokens(batch.labels));
  const std::vector<double> weights = parallel::token_weights(counts, trainer.runtime().mesh().group("dp_cp"));
  double loss_sum = 0;
  std::vector<at::Tensor> row_losses;
  const std::optional<at::ScalarType> autocast = parallel::autocast_dtype(trainer.job().train.mixed_precision);
  for (size_t k = 0; k < micro_batches.size(); ++k) {
    const data::Batch& batch = micro_batches[k];
    at::Tensor loss;
    {
      const profiling::UserScope scope("forward");
      const parallel::AutocastGuard guard(autocast);
      trainer.model().set_documents(batch.doc_ids);  // packed rows ([data] pack_sequences), else none
      trainer.set_images(batch);                     // a vision-language batch's images, else none
      const at::Tensor logits = trainer.forward(batch.input_ids);
      loss = trainer.loss().compute(logits, batch.labels);
      if (weights[k] != 1.0) loss = loss * weights[k];
      if (batch.sources.defined()) {
        row_losses.push_back(feed::row_cross_entropy(logits, batch.labels, trainer.vocab_group()));
      }
      for (const auto& [name, aux] : trainer.model().auxiliary_losses()) loss = loss + aux;
    }
    {
      const profiling::UserScope scope("backward");
      trainer.scale_loss(loss / n).backward();
    }
    loss_sum += loss.item<double>();
  }
  const profiling::UserScope scope("gradient sync and clip");
  trainer.sync_gradients();
  const double norm = trainer.clip_gradients(trainer.job().train.grad_clip_norm);
  return {loss_sum / n, norm, std::move(row_losses)};
}

}  // namespace kforge::train
