// Flattening the resolved config TOML into parameters (see config_params.h).
#include "config_params.h"

#include <toml++/toml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::builtin::metrics {
namespace {

// The shortest "%.{p}g" that reads back as the same double: 0.9, not 0.90000000000000002; 1.0, not 1.
std::string shortest_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  const std::string text = buf;
  return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;  // a float stays one: 1.0
}

// A value as text: strings bare at the top level and double-quoted inside arrays and inline tables.
std::string param_text(const toml::node& node, bool nested) {
  if (const auto* text = node.as_string()) {
    if (!nested) return text->get();
    std::string quoted = "\"";
    for (const char c : text->get()) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return quoted + "\"";
  }
  if (const auto* v = node.as_floating_point()) return shortest_double(v->get());
  if (const auto* v = node.as_integer()) return std::to_string(v->get());
  if (const auto* v = node.as_boolean()) return v->get() ? "true" : "false";
  if (const auto* array = node.as_array()) {
    std::string out = "[";
    for (size_t i = 0; i < array->size(); ++i) out += (i > 0 ? ", " : "") + param_text(*array->get(i), true);
    return out + "]";
  }
  if (const auto* table = node.as_table()) {
    std::string out = "{";
    for (const auto& [key, value] : *table) {
      out += (out.size() > 1 ? ", " : "") + std::string(key.str()) + " = " + param_text(value, true);
    }
    return out + "}";
  }
  std::ostringstream other;  // dates and times, as TOML writes them
  node.visit([&](const auto& v) { other << v; });
  return other.str();
}

void flatten_table(const toml::table& table, const std::string& prefix,
                   std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix + std::string(key.str());
    if (const toml::table* inner = node.as_table()) {
      flatten_table(*inner, name + ".", out);
    } else {
      out.emplace_back(name, param_text(node, false));
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_config_toml(const std::string& toml) {
  toml::table table;
  try {
    table = toml::parse(toml);
  } catch (const toml::parse_error& e) {
    throw sdk::Error("resolved config TOML, line " + std::to_string(e.source().begin.line) + ": " +
                     std::string(e.description()));
  }
  std::vector<std::pair<std::string, std::string>> out;
  flatten_table(table, "", out);
  return out;
}

}  // namespace kforge::builtin::metrics
