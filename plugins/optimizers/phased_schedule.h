// PhasedSchedule: linear warmup -> constant stable phase -> decay of a given shape (KempnerForge formulas).
#pragma once

#include <cstdint>

#include "kforge/sdk/scheduler.h"

namespace kforge::builtin::optimizers {

enum class DecayShape { constant, cosine, linear, sqrt, rex };

struct PhasedScheduleSpec {
  int64_t warmup_steps = 0;
  int64_t stable_steps = 0;
  int64_t decay_steps = 0;  ///< <= 0: no decay division possible (cosine/linear/sqrt stay at 1, rex uses 1)
  double min_lr_ratio = 0.0;
  DecayShape shape = DecayShape::constant;
  double rex_alpha = 1.0;
};

/// Linear warmup min(1, step / warmup) (0 at step 0; 1 when warmup is 0).
double warmup_factor(int64_t step, int64_t warmup_steps);

/// The factor `steps` into the decay phase: cosine r + (1-r)/2 (1 + cos(pi p)), linear 1 - (1-r) p,
/// sqrt r + (1-r) sqrt(1-p), with p = min(1, steps / decay) (1.0 when decay <= 0); rex
/// max(r, (1 - min(1, steps / max(decay, 1)))^alpha); constant 1.
double decay_factor(const PhasedScheduleSpec& spec, int64_t steps);

class PhasedSchedule final : public sdk::Scheduler {
 public:
  explicit PhasedSchedule(const PhasedScheduleSpec& spec) : spec_(spec) {}
  double factor(int64_t step) const override;
  const PhasedScheduleSpec& spec() const { return spec_; }

 private:
  PhasedScheduleSpec spec_;
};

}  // namespace kforge::builtin::optimizers
