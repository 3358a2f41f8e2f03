// The trainer's side of fp16 loss scaling: the scaled loss, unscaling before clipping, the overflow all ranks agree on.
#include <ATen/ATen.h>

#include <limits>

#include "kforge/sdk/error.h"
#include "train/trainer.h"

namespace kforge::train {

at::Tensor Trainer::scale_loss(const at::Tensor& loss) const {
  return scaler_ ? loss * static_cast<double>(scaler_->scale()) : loss;
}

double Trainer::clip_gradients(double max_norm) {
  if (scaler_) {
    // One rank's overflow skips the step on every rank: the ranks' gradients differ (shards, stages, tensor slices).
    overflow_ = any_rank(scaler_->unscale(parameters()));
    if (*overflow_) return std::numeric_limits<double>::quiet_NaN();
  }
  return parallel_->clip_gradients(max_norm);
}

bool Trainer::take_overflow() {
  if (!scaler_) return false;
  if (!overflow_) {
    throw sdk::Error(
        "[train] mixed_precision = \"fp16\": the step body did not call trainer.clip_gradients(), which divides the "
        "gradients by the loss scale and checks them for overflow; a custom step body calls backward() on "
        "trainer.scale_loss(loss) and clip_gradients() after sync_gradients()");
  }
  const bool overflow = *overflow_;
  overflow_.reset();
  return overflow;
}

}  // namespace kforge::train
