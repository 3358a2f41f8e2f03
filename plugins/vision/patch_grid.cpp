// Patch grid arithmetic: square grids, pooled counts, attentional_pool's divisibility.
#include "patch_grid.h"

#include <kforge/sdk/error.h>

#include <cmath>

namespace kforge::vision {

int64_t patch_grid_side(int64_t num_tokens, const std::string& adapter) {
  auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(num_tokens > 0 ? num_tokens : 0))));
  if (num_tokens <= 0 || side * side != num_tokens) {
    throw sdk::ConfigError("[adapter] type = \"" + adapter +
                           "\" pools a square patch grid, but the vision encoder gives " + std::to_string(num_tokens) +
                           " tokens, not a positive perfect square (use an encoder that strips its CLS token, "
                           "or a projection adapter: mlp_2layer, linear)");
  }
  return side;
}

void check_pool_window(int64_t window) {
  if (window <= 0) throw sdk::ConfigError("[adapter] pool_window = " + std::to_string(window) + ": must be positive");
}

int64_t pooled_token_count(int64_t num_tokens, int64_t window, const std::string& adapter) {
  check_pool_window(window);
  const int64_t side = patch_grid_side(num_tokens, adapter);
  const int64_t per_side = (side + window - 1) / window;
  return per_side * per_side;
}

void check_attentional_pool_grid(int64_t num_tokens, int64_t window) {
  check_pool_window(window);
  const int64_t side = patch_grid_side(num_tokens, "attentional_pool");
  if (side % window == 0) return;
  std::string divisors;
  for (int64_t d = 1; d <= side; ++d)
    if (side % d == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(d);
  throw sdk::ConfigError("[adapter] pool_window = " + std::to_string(window) + ": attentional_pool needs the " +
                         std::to_string(side) + "x" + std::to_string(side) + " patch grid (" +
                         std::to_string(num_tokens) + " encoder tokens) divisible by the window; use a window of " +
                         divisors + ", or type = \"avgpool\", which averages ragged edge windows");
}

}  // namespace kforge::vision
