// rolling_windows: get_rolling_token_windows(token_list, prefix_token, max_seq_len, context_len=1), each window then
// made disjoint (its context loses the tokens it predicts, all but the first).
#include "eval_tasks/token_windows.h"

#include <algorithm>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

std::vector<TokenPair> rolling_windows(const std::vector<int64_t>& tokens, int64_t prefix_token, int64_t max_seq_len) {
  if (max_seq_len < 1) throw sdk::Error("rolling_windows: max_seq_len must be >= 1");
  std::vector<TokenPair> windows;
  if (tokens.empty()) return windows;
  const auto n = static_cast<int64_t>(tokens.size());
  const auto at = [&](int64_t begin, int64_t end) {
    return std::vector<int64_t>(tokens.begin() + begin, tokens.begin() + end);
  };
  const auto disjoint = [](std::vector<int64_t> input, std::vector<int64_t> predicted) {
    input.resize(input.size() - (predicted.size() - 1));
    return TokenPair{std::move(input), std::move(predicted)};
  };
  const int64_t first = std::min(max_seq_len, n);
  std::vector<int64_t> input{prefix_token};
  input.insert(input.end(), tokens.begin(), tokens.begin() + (first - 1));
  windows.push_back(disjoint(std::move(input), at(0, first)));
  for (int64_t predicted = first; predicted < n;) {
    const int64_t length = std::min(n - predicted, max_seq_len);  // pred_len = max_seq_len - context_len + 1
    const int64_t end = predicted + length;
    windows.push_back(disjoint(at(end - max_seq_len - 1, end - 1), at(end - length, end)));
    predicted += length;
  }
  return windows;
}

}  // namespace kforge::eval_tasks
