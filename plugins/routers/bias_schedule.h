// BiasSchedule: the factor on the sigmoid router's bias update rate ([model] moe_bias_schedule).
#pragma once

#include <cstdint>
#include <string>

namespace kforge::builtin::routers {

enum class BiasSchedule { Constant, CosineDecay, LinearWarmup };

/// "constant" | "cosine_decay" | "linear_warmup"; anything else is a ConfigError naming the key.
BiasSchedule parse_bias_schedule(const std::string& name);
/// constant: 1; cosine_decay: 0.5 (1 + cos(pi step / max_steps)); linear_warmup: min(1, 10 step / max_steps).
/// max_steps <= 0 gives the value at step 0.
double bias_rate_factor(BiasSchedule schedule, int64_t step, int64_t max_steps);

}  // namespace kforge::builtin::routers
