// The longest dotted key or [table] header of a TOML text, found before toml++ parses it: its parser
// recurses once per part, so a key of a hundred thousand parts overflows the stack.
#pragma once

#include <cstddef>
#include <string_view>

namespace kforge::config {

/// A run of dot-separated key parts (bare words or quoted strings) and where it starts (1-based).
struct DottedRun {
  size_t parts = 0;
  size_t line = 0, column = 0;
};

/// The first run of more than `limit` parts, or the longest run when none is longer. Strings and
/// comments are skipped; numbers and dates count as runs of at most two parts.
DottedRun longest_dotted_run(std::string_view text, size_t limit);

}  // namespace kforge::config
