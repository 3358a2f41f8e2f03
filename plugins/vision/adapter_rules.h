// The built-in adapters' rules on a resolved config (their validation hooks), worded as kforge's own config rules.
#pragma once

#include <kforge/sdk/config_rules.h>

namespace kforge::vision {

/// attentional_pool: in a VLM run whose encoder's token count is known ([vision_encoder] num_tokens > 0) and forms a
/// square grid, [adapter] pool_window divides the grid's side (the host refuses a grid that is not square).
void check_attentional_pool(const sdk::ResolvedConfig& config);

}  // namespace kforge::vision
