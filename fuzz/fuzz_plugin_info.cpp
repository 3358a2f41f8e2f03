// Fuzz target: the checks open_plugin (core/plugins/plugin_file.cpp) applies to a plugin's component info.
// open_plugin reads the kforge_component_info of a loaded .so, so there is no byte entry point; this target
// feeds the same checks the struct's strings. Input lines: "<kind> <name>", then "key <name>\t<type>\t
// <default>\t<doc>" and "core <name>" lines.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>

#include "config/resolver.h"
#include "kforge/sdk/kinds.h"
#include "plugins/declared_core_keys.h"

namespace {

std::string plugin_info_field(std::istringstream& in) {
  std::string field;
  std::getline(in, field, '\t');
  return field;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  kforge::plugins::ComponentMeta c;
  std::string line;
  std::getline(lines, line);
  const size_t space = line.find(' ');
  c.kind = line.substr(0, space);
  c.name = space == std::string::npos ? "" : line.substr(space + 1);
  while (std::getline(lines, line)) {
    if (line.rfind("key ", 0) == 0) {
      std::istringstream fields(line.substr(4));
      kforge::plugins::ConfigKeyMeta key;
      key.name = plugin_info_field(fields);
      key.type = plugin_info_field(fields);
      key.default_value = plugin_info_field(fields);
      key.doc = plugin_info_field(fields);
      c.keys.push_back(key);
    } else if (line.rfind("core ", 0) == 0) {
      c.core_keys.push_back(line.substr(5));
    }
  }
  // open_plugin refuses a file on any std::exception from these checks; other failures escape as findings.
  if (kforge::sdk::find_kind(c.kind) == nullptr || c.name.empty()) return 0;
  for (const auto& key : c.keys) {
    try {
      kforge::config::plugin_key_spec(key.name, key.type, key.default_value, key.doc, c.kind + " '" + c.name + "'");
    } catch (const std::exception&) {
    }
  }
  try {
    kforge::plugins::declared_core_keys(c);
  } catch (const std::exception&) {
  }
  return 0;
}
