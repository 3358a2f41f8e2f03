#include "config/value.h"

#include <fmt/format.h>

#include <cmath>

namespace kforge::config {

std::string Source::describe() const {
  if (origin.empty()) return "default";
  if (line <= 0) return origin;
  return fmt::format("{}:{}:{}", origin, line, column);
}

Value Value::null(Source src) {
  Value v;
  v.source = std::move(src);
  return v;
}
Value Value::boolean(bool x, Source src) {
  Value v = null(std::move(src));
  v.type = Type::Bool;
  v.b = x;
  return v;
}
Value Value::integer(int64_t x, Source src) {
  Value v = null(std::move(src));
  v.type = Type::Int;
  v.i = x;
  return v;
}
Value Value::floating(double x, Source src) {
  Value v = null(std::move(src));
  v.type = Type::Float;
  v.f = x;
  return v;
}
Value Value::string(std::string x, Source src) {
  Value v = null(std::move(src));
  v.type = Type::String;
  v.s = std::move(x);
  return v;
}
Value Value::make_list(std::vector<Value> items, Source src) {
  Value v = null(std::move(src));
  v.type = Type::List;
  v.list = std::move(items);
  return v;
}
Value Value::make_table(Source src) {
  Value v = null(std::move(src));
  v.type = Type::Table;
  return v;
}

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : table) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  for (auto& [k, v] : table) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value& Value::set(const std::string& key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  table.emplace_back(key, std::move(value));
  return table.back().second;
}

namespace {
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string bare_or_quoted_key(const std::string& key) {
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return quote(key);
  }
  return key.empty() ? quote(key) : key;
}
}  // namespace

std::string Value::to_toml() const {
  switch (type) {
    case Type::Null: return "\"\"";  // TOML has no null; only printed for documentation
    case Type::Bool: return b ? "true" : "false";
    case Type::Int: return std::to_string(i);
    case Type::Float: {
      if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
      if (std::isnan(f)) return "nan";
      std::string s = fmt::format("{}", f);
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    case Type::String: return quote(s);
    case Type::List: {
      std::string out = "[";
      for (size_t k = 0; k < list.size(); ++k) out += (k ? ", " : "") + list[k].to_toml();
      return out + "]";
    }
    case Type::Table: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : table) {
        if (v.is_null()) continue;
        out += (first ? " " : ", ") + bare_or_quoted_key(k) + " = " + v.to_toml();
        first = false;
      }
      return out + (first ? "}" : " }");
    }
  }
  return "";
}

std::string Value::to_toml_brief(size_t max_chars) const {
  std::string out = to_toml();
  if (out.size() <= max_chars) return out;
  const size_t size = out.size();
  while (max_chars > 0 && (static_cast<unsigned char>(out[max_chars]) & 0xC0) == 0x80) --max_chars;  // UTF-8
  out.resize(max_chars);
  if (type == Type::List || type == Type::Table) {
    return fmt::format("{}... ({} entries in all)", out, type == Type::List ? list.size() : table.size());
  }
  return fmt::format("{}... ({} characters in all)", out, size);
}

const char* type_name(Value::Type type) {
  switch (type) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "bool";
    case Value::Type::Int: return "int";
    case Value::Type::Float: return "float";
    case Value::Type::String: return "string";
    case Value::Type::List: return "list";
    case Value::Type::Table: return "table";
  }
  return "?";
}

namespace {
bool is_table_list(const Value& v) {
  if (v.type != Value::Type::List || v.list.empty()) return false;
  for (const Value& item : v.list) {
    if (!item.is_table()) return false;
  }
  return true;
}

void emit_table(const std::string& path, const Value& table, std::string& out) {
  // Scalars and inline values first, then sub-tables and arrays of tables.
  for (const auto& [k, v] : table.table) {
    if (v.is_null() || v.is_table() || is_table_list(v)) continue;
    out += bare_or_quoted_key(k) + " = " + v.to_toml() + "\n";
  }
  for (const auto& [k, v] : table.table) {
    const std::string child = path.empty() ? bare_or_quoted_key(k) : path + "." + bare_or_quoted_key(k);
    if (v.is_table()) {
      out += "\n[" + child + "]\n";
      emit_table(child, v, out);
    } else if (is_table_list(v)) {
      for (const Value& item : v.list) {
        out += "\n[[" + child + "]]\n";
        emit_table(child, item, out);
      }
    }
  }
}
}  // namespace

std::string to_toml_document(const Value& root) {
  std::string out;
  emit_table("", root, out);
  if (!out.empty() && out.front() == '\n') out.erase(0, 1);
  return out;
}

}  // namespace kforge::config
