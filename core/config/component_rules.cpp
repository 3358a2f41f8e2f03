// check_component_rules: the resolved tree out as JSON, a broken rule back as a ConfigError.
#include "config/component_rules.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

nlohmann::json to_json(const Value& v) {
  switch (v.type) {
    case Value::Type::Null: return nullptr;
    case Value::Type::Bool: return v.b;
    case Value::Type::Int: return v.i;
    case Value::Type::Float: return v.f;
    case Value::Type::String: return v.s;
    case Value::Type::List: {
      nlohmann::json out = nlohmann::json::array();
      for (const Value& item : v.list) out.push_back(to_json(item));
      return out;
    }
    case Value::Type::Table: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, item] : v.table) out[key] = to_json(item);
      return out;
    }
  }
  return nullptr;
}

// A broken rule of `component` as the host's own rules word it (rules.cpp): a key's at its value's position (a
// defaulted key's at its table's), a section's at the table's.
[[noreturn]] void report(const Value& tree, const ComponentKeys& component, const std::string& error_json) {
  const std::string who = fmt::format("{} '{}' ({})", component.kind, component.name, component.file);
  std::string section, key, message;
  try {  // an object of strings; anything else (not JSON, an array, a number for a string) is malformed
    const nlohmann::json error = nlohmann::json::parse(error_json);
    section = error.value("section", "");
    key = error.value("key", "");
    message = error.value("message", "");
  } catch (const nlohmann::json::exception&) {
    throw sdk::ConfigError(fmt::format("{}: its config rules failed with a malformed report: {}", who, error_json));
  }
  const Value* table = section.empty() ? nullptr : tree.find(section);
  if (table == nullptr) throw sdk::ConfigError(fmt::format("{}: {}", who, message));
  const Value* value = key.empty() ? nullptr : table->find(key);
  if (value == nullptr) throw sdk::ConfigError(fmt::format("{}: {}", table->source.describe(), message));
  const Source& where = value->source.origin.empty() ? table->source : value->source;
  throw sdk::ConfigError(
      fmt::format("{}: [{}] {} = {}: {}", where.describe(), section, key, value->to_toml_brief(), message));
}

}  // namespace

std::string config_json(const Value& tree, int64_t world_size) {
  return nlohmann::json{{"world_size", world_size}, {"config", to_json(tree)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void check_component_rules(const Value& tree, const std::vector<ComponentKeys>& components, int64_t world_size) {
  std::string json;
  for (const ComponentKeys& c : components) {
    if (!c.rules) continue;
    if (json.empty()) json = config_json(tree, world_size);
    if (const std::string error = c.rules(json); !error.empty()) report(tree, c, error);
  }
}

}  // namespace kforge::config
