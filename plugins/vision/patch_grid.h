// Patch grid arithmetic of the pooling adapters: the square grid an encoder's patch tokens form, the
// token count after window pooling, and the divisibility rule of attentional_pool (also for config
// validation, before anything is built).
#pragma once

#include <cstdint>
#include <string>

namespace kforge::vision {

/// The side g of the g x g grid of `num_tokens` patch tokens; throws sdk::ConfigError naming `adapter`
/// when num_tokens is not a positive perfect square (e.g. a CLS token was kept).
int64_t patch_grid_side(int64_t num_tokens, const std::string& adapter);

/// Throws sdk::ConfigError naming [adapter] pool_window when window <= 0.
void check_pool_window(int64_t window);

/// Tokens out of a window x window pool with ceil edges: ceil(g / window)^2; throws as
/// check_pool_window and patch_grid_side.
int64_t pooled_token_count(int64_t num_tokens, int64_t window, const std::string& adapter);

/// attentional_pool's rule: the grid is square and its side a multiple of the window. Throws
/// sdk::ConfigError naming [adapter] pool_window, the grid and the windows that would divide it.
void check_attentional_pool_grid(int64_t num_tokens, int64_t window);

}  // namespace kforge::vision
