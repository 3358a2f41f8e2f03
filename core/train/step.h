// The step body: forward and backward over one optimizer step's micro-batches, then clipping.
// The loop around it (NaN policy, optimizer and scheduler step, metrics, checkpoints) is shared.
#pragma once

#include <functional>
#include <vector>

#include "data/batch.h"
#include "parallel/step_result.h"

namespace kforge::train {

class Trainer;

/// What a step body returns (parallel/step_result.h).
using StepResult = parallel::StepResult;

/// A step body. It must leave clipped gradients in the parameters' .grad and must not step the
/// optimizer; a non-finite loss or norm makes the loop skip the update. With several data-parallel
/// ranks it calls trainer.sync_gradients() after the last backward and before clipping, and returns
/// its own ranks' loss (the loop averages it over the ranks). Under fp16 it calls backward() on
/// trainer.scale_loss(loss) and clips with trainer.clip_gradients() (which unscales first).
using StepFn = std::function<StepResult(Trainer& trainer, const std::vector<data::Batch>& micro_batches)>;

/// The standard text step: per micro-batch logits = trainer.forward(input_ids), loss x its token weight
/// (token_weights over the data-parallel ranks: the step trains on the mean over every trained token of the global
/// batch, as one rank would; a text batch, all of whose labels train, weighs exactly 1) (+ the model's auxiliary
/// losses) / n_micro, backward; then the data-parallel gradient average and global-norm
/// clipping to train.grad_clip_norm; for batches that carry their sources, each row's cross-entropy.
StepResult standard_step(Trainer& trainer, const std::vector<data::Batch>& micro_batches);

}  // namespace kforge::train
