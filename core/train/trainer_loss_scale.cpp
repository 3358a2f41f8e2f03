// The trainer's side of fp16 loss scaling: the scaled loss, unscaling before clipping, the overflow all ranks agree on.
#include <ATen/ATen.h>

#include <limits>

#include "kforge/sdk/error.h"
#include "train/trainer.h"

namespace kforge::train {

at::Tensor Trainer::scale_loss(const at::Tensor& loss) const {
  return fp16_.scaler ? loss * static_cast<double>(fp16_.scaler->scale()) : loss;
}

double Trainer::clip_gradients(double max_norm) {
  if (fp16_.scaler) {
    // One rank's overflow skips the step on every rank: the ranks' gradients differ (shards, stages, tensor slices).
    fp16_.overflow = any_rank(fp16_.scaler->unscale(parameters()));
    if (*fp16_.overflow) return std::numeric_limits<double>::quiet_NaN();
  }
  return model_.parallel->clip_gradients(max_norm);
}

bool Trainer::take_overflow() {
  if (!fp16_.scaler) return false;
  if (!fp16_.overflow) {
    throw sdk::Error(
        "[train] mixed_precision = \"fp16\": the step body did not call trainer.clip_gradients(), which divides the "
        "gradients by the loss scale and checks them for overflow; a custom step body calls backward() on "
        "trainer.scale_loss(loss) and clip_gradients() after sync_gradients()");
  }
  const bool overflow = *fp16_.overflow;
  fp16_.overflow.reset();
  return overflow;
}

}  // namespace kforge::train
