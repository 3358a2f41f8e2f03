// Rolling windows: lm-eval-harness's get_rolling_token_windows + make_disjoint_window, for loglikelihood_rolling.
#pragma once

#include <cstdint>
#include <vector>

namespace kforge::eval_tasks {

/// Tokens to condition on and tokens to score.
struct TokenPair {
  std::vector<int64_t> context, continuation;
};

/// The disjoint windows that score every token of `tokens` once, each input at most `max_seq_len` tokens: the first
/// predicts up to max_seq_len tokens after `prefix_token`; each later one predicts the next up to max_seq_len tokens
/// conditioned on the tokens right before them (lm-eval's context_len = 1). Empty `tokens`: no windows.
std::vector<TokenPair> rolling_windows(const std::vector<int64_t>& tokens, int64_t prefix_token, int64_t max_seq_len);

}  // namespace kforge::eval_tasks
