// BiasSchedule: parsing and the three schedule formulas (KempnerForge's sigmoid router).
#include "bias_schedule.h"

#include <kforge/sdk/error.h>

#include <algorithm>
#include <cmath>

namespace kforge::builtin::routers {

BiasSchedule parse_bias_schedule(const std::string& name) {
  if (name == "constant") return BiasSchedule::Constant;
  if (name == "cosine_decay") return BiasSchedule::CosineDecay;
  if (name == "linear_warmup") return BiasSchedule::LinearWarmup;
  throw sdk::ConfigError("[model] moe_bias_schedule = \"" + name +
                         "\": must be \"constant\", \"cosine_decay\" or \"linear_warmup\"");
}

double bias_rate_factor(BiasSchedule schedule, int64_t step, int64_t max_steps) {
  const double progress = max_steps > 0 ? static_cast<double>(step) / static_cast<double>(max_steps) : 0.0;
  switch (schedule) {
    case BiasSchedule::Constant: return 1.0;
    case BiasSchedule::CosineDecay: return 0.5 * (1.0 + std::cos(M_PI * progress));
    case BiasSchedule::LinearWarmup: return std::min(1.0, 10.0 * progress);
  }
  return 1.0;
}

}  // namespace kforge::builtin::routers
