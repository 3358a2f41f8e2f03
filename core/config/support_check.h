// Acting on key support: a config that asks for what this kforge does not implement is refused
// (naming every such key, its file and line), and keys that have no effect here are warned about.
#pragma once

#include <string>
#include <vector>

#include "config/value.h"

namespace kforge::config {

/// Throws sdk::ConfigError listing every refused section and key whose value asks for something
/// (see key_support.h). Returns one warning per no-effect key set, in the file or on the command
/// line, to a value other than its inert one. `resolved` is a resolved config tree.
std::vector<std::string> check_support(const Value& resolved);

}  // namespace kforge::config
