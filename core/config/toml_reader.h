// Reading a TOML file (toml++) into a config Value tree with source positions.
#pragma once

#include <filesystem>
#include <string>

#include "config/value.h"

namespace kforge::config {

/// Parses `path`. Throws sdk::ConfigError with the parser's file:line:column on malformed TOML,
/// and naming the file when it cannot be read.
Value read_toml_file(const std::filesystem::path& path);

/// Parses TOML text (origin names it in errors).
Value read_toml_string(const std::string& text, const std::string& origin);

}  // namespace kforge::config
