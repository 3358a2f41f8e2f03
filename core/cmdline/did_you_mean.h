// "Did you mean" suggestions for misspelt names (edit distance).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::cmdline {

/// Levenshtein distance between two strings.
size_t edit_distance(std::string_view a, std::string_view b);

/// " Did you mean 'x'?" for the closest candidate within a small distance, else "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace kforge::cmdline
