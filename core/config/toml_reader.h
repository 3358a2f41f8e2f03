// Reading a TOML file (toml++) into a config Value tree with source positions.
#pragma once

#include <filesystem>
#include <string>

#include "config/value.h"

namespace kforge::config {

/// Parses `path`. Throws sdk::ConfigError with the parser's file:line:column on malformed TOML or a
/// nesting deeper than kMaxConfigDepth, and naming the file when it cannot be read, is a directory,
/// is larger than kMaxConfigBytes, or sets nothing (empty or only comments: a file meant to run on
/// all defaults says so with a section header and no keys, e.g. "[train]").
Value read_toml_file(const std::filesystem::path& path);

/// Parses TOML text (origin names it in errors); the same nesting limit applies.
Value read_toml_string(const std::string& text, const std::string& origin);

}  // namespace kforge::config
