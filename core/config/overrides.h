// Command-line overrides: --section.key=value, parsed the way KempnerForge's loader does.
#pragma once

#include <string>
#include <string_view>

#include "config/value.h"

namespace kforge::config {

/// True for "--a.b" and "--a.b=value" (a dotted key after the dashes).
bool is_override(std::string_view arg);

/// Parses an override's value: None/null -> null, True/False (any case) -> bool, numbers, lists
/// ("[1, 2]" or Python tuples "(0.9, 0.95)"), quoted strings; anything else stays a raw string.
Value parse_override_value(std::string_view text);

/// Applies "--a.b.c=value" (no "=value" means true) to a raw config tree, creating tables.
/// Throws sdk::ConfigError for a malformed argument.
void apply_override(Value& root, std::string_view arg);

}  // namespace kforge::config
