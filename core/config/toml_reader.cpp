#include "config/toml_reader.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

Source source_of(const toml::node& node, const std::string& origin) {
  const auto& begin = node.source().begin;
  return Source{origin, static_cast<int>(begin.line), static_cast<int>(begin.column)};
}

Value convert(const toml::node& node, const std::string& origin) {
  const Source src = source_of(node, origin);
  if (const auto* t = node.as_table()) {
    Value out = Value::make_table(src);
    for (const auto& [key, child] : *t) out.set(std::string(key.str()), convert(child, origin));
    return out;
  }
  if (const auto* a = node.as_array()) {
    Value out = Value::make_list({}, src);
    for (const auto& child : *a) out.list.push_back(convert(child, origin));
    return out;
  }
  if (const auto* v = node.as_string()) return Value::string(v->get(), src);
  if (const auto* v = node.as_integer()) return Value::integer(v->get(), src);
  if (const auto* v = node.as_floating_point()) return Value::floating(v->get(), src);
  if (const auto* v = node.as_boolean()) return Value::boolean(v->get(), src);
  // Dates and times have no meaning in a kforge config (no key takes one).
  throw sdk::ConfigError(fmt::format("{}: a TOML date/time is not a valid config value (no key takes one; quote "
                                     "it to make a string)",
                                     src.describe()));
}

Value parse(const std::string& text, const std::string& origin) {
  try {
    return convert(toml::parse(text, origin), origin);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw sdk::ConfigError(fmt::format("{}:{}:{}: malformed TOML: {}", origin, begin.line, begin.column,
                                       e.description()));
  }
}

}  // namespace

Value read_toml_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw sdk::ConfigError(fmt::format("cannot read config file '{}': {}", path.string(),
                                       std::filesystem::exists(path) ? "permission denied" : "no such file"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path.string());
}

Value read_toml_string(const std::string& text, const std::string& origin) { return parse(text, origin); }

}  // namespace kforge::config
