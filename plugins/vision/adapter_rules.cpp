// The built-in adapters' config rules (adapter_rules.h).
#include "adapter_rules.h"

#include <cmath>
#include <string>

namespace kforge::vision {

void check_attentional_pool(const sdk::ResolvedConfig& config) {
  if (!config.has("vlm") || !config.has("vision_encoder")) return;
  const int64_t tokens = config.section("vision_encoder").i("num_tokens");
  if (tokens <= 0) return;  // probed when the encoder is built
  auto grid = static_cast<int64_t>(std::sqrt(static_cast<double>(tokens)));
  while (grid * grid > tokens) --grid;
  while ((grid + 1) * (grid + 1) <= tokens) ++grid;
  if (grid * grid != tokens) return;
  const sdk::RuleSection adapter = config.section("adapter");
  const std::string side = std::to_string(grid);
  adapter.require(grid % adapter.i("pool_window") == 0, "pool_window",
                  "attentional_pool needs the patch grid (" + side + "x" + side + ") divisible by the window");
}

}  // namespace kforge::vision
