// The step body: forward and backward over one optimizer step's micro-batches, then clipping.
// The loop around it (NaN policy, optimizer and scheduler step, metrics, checkpoints) is shared.
#pragma once

#include <functional>
#include <vector>

#include "data/batch.h"
#include "kforge/sdk/optimizer.h"

namespace kforge::train {

class Trainer;

struct StepResult {
  double loss = 0;       ///< mean of the micro-batch losses, each weighted by its share of the trained tokens
  double grad_norm = 0;  ///< global L2 norm of the gradients before clipping
  /// For batches that carry their sources (a data mixture, on a step whose metrics are logged): per
  /// micro-batch, float64 [B] each row's mean cross-entropy (row_cross_entropy), for the
  /// loss/<source> metrics; may be left empty.
  std::vector<at::Tensor> row_losses;
};

/// A step body. It must leave clipped gradients in the parameters' .grad and must not step the
/// optimizer; a non-finite loss or norm makes the loop skip the update. With several data-parallel
/// ranks it calls trainer.sync_gradients() after the last backward and before clipping, and returns
/// its own ranks' loss (the loop averages it over the ranks). Under fp16 it calls backward() on
/// trainer.scale_loss(loss) and clips with trainer.clip_gradients() (which unscales first).
using StepFn = std::function<StepResult(Trainer& trainer, const std::vector<data::Batch>& micro_batches)>;

/// `grad`'s sum of squares as a float64 scalar: its L2 norm reduced at the gradient's precision (float for bfloat16),
/// as clip_grad_norm's per-tensor norms, squared in float64; what sharded clipping adds up over ranks. One pass over
/// the gradient, with no float64 copy of it.
at::Tensor squared_norm(const at::Tensor& grad);

/// Scales every defined gradient of `params` by min(1, max_norm / (norm + 1e-6)) (torch's clip_grad_norm_, given the
/// global norm, computed in float64 by the caller); returns `norm`.
double scale_to_norm(const std::vector<sdk::NamedParameter>& params, double norm, double max_norm);

/// The standard text step: per micro-batch logits = trainer.forward(input_ids), loss x its token weight
/// (token_weights over the data-parallel ranks: the step trains on the mean over every trained token of the global
/// batch, as one rank would; a text batch, all of whose labels train, weighs exactly 1) (+ the model's auxiliary
/// losses) / n_micro, backward; then the data-parallel gradient average and global-norm
/// clipping to train.grad_clip_norm; for batches that carry their sources, each row's cross-entropy.
StepResult standard_step(Trainer& trainer, const std::vector<data::Batch>& micro_batches);

/// torch.nn.utils.clip_grad_norm_ semantics: returns the pre-clip total norm and scales the
/// gradients by min(1, max_norm / (norm + 1e-6)).
double clip_grad_norm(const std::vector<sdk::NamedParameter>& params, double max_norm);

}  // namespace kforge::train
