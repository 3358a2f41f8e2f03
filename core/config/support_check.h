// Acting on key support: a config that asks for what this kforge does not implement is refused
// (naming every such key, its file and line), and keys that have no effect here are warned about.
#pragma once

#include <string>
#include <vector>

#include "config/schema.h"
#include "config/value.h"

namespace kforge::config {

/// Throws sdk::ConfigError listing every refused section and key whose value asks for something
/// (see key_support.h). Returns one warning per no-effect key set, in the file or on the command
/// line, to a value other than its inert one. `resolved` is a config tree resolved against `schema`, whose
/// component keys carry their components' decisions.
std::vector<std::string> check_support(const Value& resolved, const std::vector<SectionSpec>& schema);

}  // namespace kforge::config
