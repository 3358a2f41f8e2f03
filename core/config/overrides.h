// Command-line overrides: --section.key=value, parsed the way KempnerForge's loader does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/value.h"

namespace kforge::config {

/// True for "--a.b" and "--a.b=value" (a dotted key after the dashes).
bool is_override(std::string_view arg);

/// A subcommand's arguments split into its config overrides and the rest (for cxxopts).
struct SplitArguments {
  std::vector<std::string> overrides;  ///< each as "--a.b=value", or "--a.b" (true)
  std::vector<char*> rest;             ///< argv[0] and every other argument, in order
};

/// Takes the overrides out of argv[1..]: "--a.b=value", and the space form "--a.b value" (the next
/// argument is the value unless it is a flag: "-x" or "--x", not "-1" or "-.5"); a bare "--a.b"
/// before a flag or at the end stays "--a.b".
SplitArguments split_overrides(int argc, char** argv);

/// Parses an override's value: None (that word only) -> null, True/False (any case) -> bool, numbers,
/// lists ("[1, 2]" or Python tuples "(0.9, 0.95)"), quoted strings; anything else, "none" and "null"
/// included, stays a raw string.
Value parse_override_value(std::string_view text);

/// Applies "--a.b.c=value" (no "=value" means true) to a raw config tree, creating tables.
/// Throws sdk::ConfigError for a malformed argument or a key of more than kMaxConfigDepth parts.
void apply_override(Value& root, std::string_view arg);

}  // namespace kforge::config
