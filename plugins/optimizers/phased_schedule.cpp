// Warmup / stable / decay learning-rate factors (see phased_schedule.h).
#include "phased_schedule.h"

#include <algorithm>
#include <cmath>

namespace kforge::builtin::optimizers {

double warmup_factor(int64_t step, int64_t warmup_steps) {
  if (warmup_steps <= 0) return 1.0;
  return std::min(1.0, static_cast<double>(step) / static_cast<double>(warmup_steps));
}

double decay_factor(const PhasedScheduleSpec& spec, int64_t steps) {
  const double r = spec.min_lr_ratio;
  const auto progress = [steps](int64_t length) {
    return std::min(1.0, static_cast<double>(steps) / static_cast<double>(length));
  };
  switch (spec.shape) {
    case DecayShape::constant:
      return 1.0;
    case DecayShape::rex:
      return std::max(r, std::pow(1.0 - progress(std::max<int64_t>(spec.decay_steps, 1)), spec.rex_alpha));
    case DecayShape::cosine:
    case DecayShape::linear:
    case DecayShape::sqrt:
      break;
  }
  if (spec.decay_steps <= 0) return 1.0;  // nothing to decay over (KempnerForge's guard)
  const double p = progress(spec.decay_steps);
  switch (spec.shape) {
    case DecayShape::cosine: return r + 0.5 * (1.0 - r) * (1.0 + std::cos(M_PI * p));
    case DecayShape::linear: return 1.0 - (1.0 - r) * p;
    default: return r + (1.0 - r) * std::sqrt(1.0 - p);
  }
}

double PhasedSchedule::factor(int64_t step) const {
  if (step < spec_.warmup_steps) return warmup_factor(step, spec_.warmup_steps);
  if (step < spec_.warmup_steps + spec_.stable_steps) return 1.0;
  return decay_factor(spec_, step - spec_.warmup_steps - spec_.stable_steps);
}

}  // namespace kforge::builtin::optimizers
