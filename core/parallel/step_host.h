// StepHost: what a step body uses of the run it trains (the trainer is one): the config, the model and loss, the
// forward, the process groups, and the gradient sync, clipping and loss scaling it calls in order.
#pragma once

#include <ATen/core/Tensor.h>

#include "config/job_config.h"
#include "data/batch.h"
#include "dist/runtime.h"
#include "kforge/sdk/loss.h"
#include "kforge/sdk/model.h"

namespace kforge::parallel {

class StepHost {
 public:
  virtual const config::JobConfig& job() const = 0;
  virtual sdk::Model& model() = 0;
  virtual sdk::Loss& loss() = 0;
  /// The model's forward as the parallelism runs it (FSDP: its root parameters gathered).
  virtual at::Tensor forward(const at::Tensor& tokens) = 0;
  /// The images of the next forward's rows (`batch`'s pixel_values and its clips' marks); none for a text batch.
  virtual void set_images(const data::Batch& batch) = 0;
  /// The process groups and device mesh (groups of one in a single process).
  virtual const dist::Runtime& runtime() const = 0;
  /// Tensor parallelism: the group over whose ranks the model's logits are split by vocabulary; else null.
  virtual const dist::Group* vocab_group() const = 0;
  /// After the last micro-batch's backward: the gradients averaged over the data-parallel ranks.
  virtual void sync_gradients() = 0;
  /// After sync_gradients(): global-norm clipping to `max_norm`; returns the norm before clipping (NaN on an fp16
  /// overflow).
  virtual double clip_gradients(double max_norm) = 0;
  /// `loss` times the fp16 loss scale, else `loss`: what backward() is called on.
  virtual at::Tensor scale_loss(const at::Tensor& loss) const = 0;

 protected:
  ~StepHost() = default;
};

}  // namespace kforge::parallel
