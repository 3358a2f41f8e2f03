// Dynamic loss scaling for [train] mixed_precision = "fp16", with torch.cuda.amp.GradScaler's semantics: the loss is
// multiplied by the scale before the backward, the gradients divided by it before clipping, and a non-finite gradient
// skips the step and shrinks the scale; growth_interval clean steps in a row grow it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "kforge/sdk/optimizer.h"

namespace kforge::config {
struct JobConfig;
}

namespace kforge::train {

/// [train] loss_scale_init, loss_scale_growth, loss_scale_backoff and loss_scale_growth_interval.
struct LossScaleSettings {
  double init = 65536.0;
  double growth = 2.0;
  double backoff = 0.5;
  int64_t growth_interval = 2000;
};

/// The [train] loss_scale_* keys of `job`.
LossScaleSettings loss_scale_settings(const config::JobConfig& job);

class LossScaler {
 public:
  explicit LossScaler(LossScaleSettings settings);

  /// The current scale: a float32 value, as GradScaler keeps it.
  float scale() const { return scale_; }
  /// Clean steps since the scale last changed (GradScaler's growth tracker).
  int64_t growth_tracker() const { return growth_tracker_; }

  /// Multiplies every defined gradient of `params` by 1 / scale (rounded to float32, as GradScaler's unscale_);
  /// returns whether any of them then holds a non-finite value (this rank's gradients only).
  bool unscale(const std::vector<sdk::NamedParameter>& params) const;

  /// After a step: a non-finite gradient (on any rank) multiplies the scale by backoff and restarts the count; a clean
  /// step counts, and the growth_interval-th in a row multiplies the scale by growth (unless that is not finite in
  /// float32) and restarts the count.
  void update(bool found_inf);

  /// {"scale", "growth_tracker"}: what a checkpoint's train state keeps, so a resume continues the same scale.
  nlohmann::json state() const;
  /// Restores state(); throws sdk::Error naming the field when `state` lacks one or holds a scale that is not > 0.
  void load_state(const nlohmann::json& state);

 private:
  LossScaleSettings settings_;
  float scale_;
  int64_t growth_tracker_ = 0;
};

}  // namespace kforge::train
